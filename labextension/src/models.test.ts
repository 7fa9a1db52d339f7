import { describe, expect, it } from 'vitest';

import { factsText, modelFacts, modelOptions, parseServedFacts } from './models';

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

describe('model facts', () => {
  const base = { provider: 'openai', profiles: [], served_error: null };

  it('reads OpenRouter’s context_length and per-token pricing', () => {
    expect(
      parseServedFacts({
        id: 'anthropic/claude-sonnet-4',
        context_length: 200000,
        pricing: { prompt: '0.000003', completion: '0.000015' }
      })
    ).toEqual({ contextWindow: 200000, inputPerMtok: 3, outputPerMtok: 15 });
  });

  it('reads vLLM’s max_model_len and llama.cpp’s meta.n_ctx_train', () => {
    expect(parseServedFacts({ id: 'q', max_model_len: 32768 }).contextWindow).toBe(32768);
    expect(parseServedFacts({ id: 'l', meta: { n_ctx_train: 131072, n_params: 8e9 } }).contextWindow).toBe(131072);
    expect(parseServedFacts({ id: 'x', context_length: 'lots', pricing: { prompt: '-1' } })).toEqual({
      contextWindow: undefined,
      inputPerMtok: undefined,
      outputPerMtok: undefined
    });
    expect(parseServedFacts(undefined)).toEqual({});
  });

  it('takes the configuration first, then the server, then the kernel\'s table', () => {
    const choices = {
      ...base,
      current: 'gpt-4.1',
      served: ['gpt-4.1', 'qwen3-coder', 'mystery'],
      configured: { 'gpt-4.1': { context_window: 64000 } },
      served_facts: {
        'gpt-4.1': { id: 'gpt-4.1', context_length: 1000, pricing: { prompt: '0.000001', completion: '0.000002' } },
        'qwen3-coder': { id: 'qwen3-coder', max_model_len: 262144 }
      },
      known: {
        'gpt-4.1': { context_window: 1_047_576, input_per_mtok: 2, output_per_mtok: 8 },
        'gpt-4o-mini': { context_window: 128_000, input_per_mtok: 0.15, output_per_mtok: 0.6 }
      }
    };
    expect(modelFacts('gpt-4.1', choices)).toEqual({ contextWindow: 64000, inputPerMtok: 1, outputPerMtok: 2 });
    expect(modelFacts('gpt-4o-mini', choices)).toEqual({ contextWindow: 128_000, inputPerMtok: 0.15, outputPerMtok: 0.6 });
    expect(modelFacts('gpt-4o-mini', { ...choices, known: undefined })).toEqual({
      contextWindow: undefined,
      inputPerMtok: undefined,
      outputPerMtok: undefined
    });
    expect(modelOptions(choices)).toEqual([
      { model: 'gpt-4.1', label: 'gpt-4.1 (in use) — 64k context · $1 / $2 per M tokens' },
      { model: 'qwen3-coder', label: 'qwen3-coder (served) — 262k context' },
      { model: 'mystery', label: 'mystery (served)' }
    ]);
  });

  it('says large windows in millions and small prices to the tenth of a cent', () => {
    expect(factsText({ contextWindow: 1_047_576, inputPerMtok: 0.15, outputPerMtok: 0.6 })).toBe(
      '1.05M context · $0.15 / $0.6 per M tokens'
    );
    expect(factsText({})).toBe('');
  });
});
