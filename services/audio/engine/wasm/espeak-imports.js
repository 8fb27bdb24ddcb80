// Emscripten JS library: the C glue's tts_on_samples import calls the Module's onSamples hook.
mergeInto(LibraryManager.library, {
  tts_on_samples: function (samples, count) {
    return Module.onSamples(samples, count);
  },
});
