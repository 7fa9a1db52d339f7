/**
 * The model picker's options, pure: the model in use first, then the models the server lists,
 * then the profiles' models (each model once, labelled with where it comes from).
 */
import type { IModelChoices } from './protocol';

export interface IModelOption {
  model: string;
  label: string;
}

export function modelOptions(choices: IModelChoices): IModelOption[] {
  const seen = new Set<string>();
  const out: IModelOption[] = [];
  const add = (model: string | null, label: string) => {
    if (model && !seen.has(model)) {
      seen.add(model);
      out.push({ model, label });
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
