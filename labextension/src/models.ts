/**
 * The model picker's options, pure: the model in use first, then the models the server lists,
 * then the profiles' models (each model once, labelled with where it comes from, and with its
 * context window and price where known: from the configuration, else from what the server's
 * `/v1/models` entry says, else from the kernel's built-in table, the one its budget prices by).
 */
import type { IModelChoices } from './protocol';

export interface IModelOption {
  model: string;
  label: string;
}

/** What is known of a model: context window in tokens, dollars per million tokens. */
export interface IModelFacts {
  contextWindow?: number;
  inputPerMtok?: number;
  outputPerMtok?: number;
}

const positive = (value: unknown): number | undefined => {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
};

const price = (value: unknown): number | undefined => {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** What one `/v1/models` entry says: OpenRouter's `context_length` and `pricing` (dollars per
 * token, as strings), vLLM's `max_model_len`, llama.cpp's `meta.n_ctx_train`. */
export function parseServedFacts(entry: Record<string, unknown> | undefined): IModelFacts {
  if (!entry) {
    return {};
  }
  const meta = entry.meta as Record<string, unknown> | undefined;
  const contextWindow =
    positive(entry.context_length) ?? positive(entry.max_model_len) ?? positive(meta?.n_ctx_train);
  const pricing = entry.pricing as Record<string, unknown> | undefined;
  const perToken = (v: unknown) => {
    const n = price(v);
    return n === undefined ? undefined : Math.round(n * 1e6 * 1e6) / 1e6;
  };
  return { contextWindow, inputPerMtok: perToken(pricing?.prompt), outputPerMtok: perToken(pricing?.completion) };
}

/** A model's facts, each from the first that says: the configuration, the server, the table. */
export function modelFacts(model: string, choices: IModelChoices): IModelFacts {
  const configured = choices.configured?.[model] ?? {};
  const served = parseServedFacts(choices.served_facts?.[model]);
  const known = choices.known?.[model] ?? {};
  return {
    contextWindow: positive(configured.context_window) ?? served.contextWindow ?? positive(known.context_window),
    inputPerMtok: price(configured.input_per_mtok) ?? served.inputPerMtok ?? price(known.input_per_mtok),
    outputPerMtok: price(configured.output_per_mtok) ?? served.outputPerMtok ?? price(known.output_per_mtok)
  };
}

const tokens = (n: number): string =>
  n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(2)}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n);

const dollars = (n: number): string => `$${n < 1 ? +n.toFixed(3) : +n.toFixed(2)}`;

/** "128k context · $2.5 / $10 per M tokens", or '' when nothing is known. */
export function factsText(facts: IModelFacts): string {
  const parts: string[] = [];
  if (facts.contextWindow) {
    parts.push(`${tokens(facts.contextWindow)} context`);
  }
  if (facts.inputPerMtok !== undefined && facts.outputPerMtok !== undefined) {
    parts.push(`${dollars(facts.inputPerMtok)} / ${dollars(facts.outputPerMtok)} per M tokens`);
  }
  return parts.join(' · ');
}

export function modelOptions(choices: IModelChoices): IModelOption[] {
  const seen = new Set<string>();
  const out: IModelOption[] = [];
  const add = (model: string | null, label: string) => {
    if (model && !seen.has(model)) {
      seen.add(model);
      const facts = factsText(modelFacts(model, choices));
      out.push({ model, label: facts ? `${label} — ${facts}` : label });
    }
  };
  add(choices.current, `${choices.current} (in use)`);
  for (const model of choices.served) {
    add(model, `${model} (served)`);
  }
  for (const profile of choices.profiles) {
    add(profile.model, `${profile.model} (profile ${profile.name})`);
  }
  return out;
}
