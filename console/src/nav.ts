// Navigation state shared by the shell and the pages (its own module, so the
// lazily loaded statistics chunk does not pull in the shell).
export interface Route {
  path: string[];
  query: URLSearchParams;
}

/** Each navigation gets a generation; a page that finished after the user left does not draw. */
export let generation = 0;
export const nextGeneration = () => ++generation;
export const stillCurrent = (gen: number) => gen === generation;

let rerender: () => void = () => undefined;
export const setRerender = (fn: () => void) => (rerender = fn);

export function go(hash: string): void {
  if (location.hash === hash) rerender();
  else location.hash = hash;
}
