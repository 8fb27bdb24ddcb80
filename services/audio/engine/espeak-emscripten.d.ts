// The package ships no types; this covers the part of its Emscripten/WebIDL surface we call.
declare module "@echogarden/espeak-ng-emscripten" {
  export interface ESpeakWorker {
    set_voice(name: string): number;
    set_rate(wpm: number): number;
    set_pitch(pitch: number): number;
    get_samplerate(): number;
    synth_(text: string, callback: number): void;
  }
  export interface ESpeakModule {
    eSpeakNGWorker: new () => ESpeakWorker;
    addFunction(fn: (samples: number, count: number, events: number) => number, signature: string): number;
    HEAP16: Int16Array;
  }
  const factory: (options?: object) => Promise<ESpeakModule>;
  export default factory;
}
