// The package ships no types: its default export is Emscripten's module factory.
declare module "@echogarden/svoxpico-wasm" {
  const SvoxPico: (options?: object) => Promise<unknown>;
  export default SvoxPico;
}
