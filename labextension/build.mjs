// Builds the prebuilt lab extension. JupyterLab >= 4.6 hands `jupyter labextension build` to
// jupyter_builder, which looks up @jupyterlab/core-meta online unless it is given JupyterLab's
// own core package file; this passes it, so the build works offline and in CI.
//
// The core package file is found through the Python that runs `jupyter` (in a pip build
// environment that is not the `python3` on PATH): $PYTHON, else the `jupyter` script's shebang.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function jupyterPython() {
  if (process.env.PYTHON) {
    return process.env.PYTHON;
  }
  for (const dir of (process.env.PATH || '').split(delimiter)) {
    const script = join(dir, 'jupyter');
    if (existsSync(script)) {
      const first = readFileSync(script, 'utf8').split('\n', 1)[0];
      if (first.startsWith('#!') && !first.includes(' ')) {
        return first.slice(2).trim();
      }
      break;
    }
  }
  return 'python3';
}

const python = jupyterPython();
const staging = execFileSync(
  python,
  ['-c', 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging", "package.json"))'],
  { encoding: 'utf8' }
).trim();
const args = ['-m', 'jupyterlab.labextensions', 'build', '.', '--core-package-file', staging];
if (process.argv.includes('--development')) {
  args.push('--development', 'True', '--source-map', 'True');
}
execFileSync(python, args, { stdio: 'inherit' });
// The build carries the digest of the sources it was made from; scripts/test.sh checks it
// (source_digest.py says why the built bytes themselves cannot be compared).
execFileSync(python, ['source_digest.py', '--write'], { stdio: 'inherit' });
