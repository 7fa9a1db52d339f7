import { describe, expect, it } from 'vitest';

import { modelOptions } from './models';

describe('modelOptions', () => {
  it('lists the model in use, then the served ones, then the profiles’, each once', () => {
    const options = modelOptions({
      current: 'qwen3-coder',
      provider: 'openai',
      profiles: [
        { name: 'cheap', model: 'small' },
        { name: 'same', model: 'qwen3-coder' },
        { name: 'none', model: null }
      ],
      served: ['qwen3-coder', 'llama3'],
      served_error: null
    });
    expect(options).toEqual([
      { model: 'qwen3-coder', label: 'qwen3-coder (in use)' },
      { model: 'llama3', label: 'llama3 (served)' },
      { model: 'small', label: 'small (profile cheap)' }
    ]);
  });
});
