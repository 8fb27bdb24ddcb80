// Thin C surface over eSpeak NG's synchronous API for the WASM build.
#include <emscripten.h>
#include <stdlib.h>
#include <espeak-ng/speak_lib.h>

// Provided by the JavaScript side: receives each block of 16-bit samples; non-zero stops synthesis.
extern int tts_on_samples(short *samples, int count);

static int on_synth(short *wav, int count, espeak_EVENT *events) {
  (void)events;
  if (wav == 0 || count <= 0) return 0;
  return tts_on_samples(wav, count);
}

EMSCRIPTEN_KEEPALIVE int tts_init(const char *data_dir, int buffer_ms) {
  int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, buffer_ms, data_dir, espeakINITIALIZE_DONT_EXIT);
  if (rate > 0) espeak_SetSynthCallback(on_synth);
  return rate;
}

EMSCRIPTEN_KEEPALIVE int tts_set_voice(const char *name) { return espeak_SetVoiceByName(name); }

EMSCRIPTEN_KEEPALIVE int tts_set_param(int parameter, int value) { return espeak_SetParameter(parameter, value, 0); }

// Text is NUL-terminated UTF-8, read as plain text (no SSML, no [[phonemes]]), with the end-of-text pause.
// eSpeak's voice noise comes from rand(); reseeding makes every request sound the same for the same
// text, as the native program does (it starts afresh with the default seed each time).
EMSCRIPTEN_KEEPALIVE int tts_speak(const char *text, int bytes) {
  srand(1);
  return espeak_Synth(text, bytes + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8 | espeakENDPAUSE, 0, 0);
}
