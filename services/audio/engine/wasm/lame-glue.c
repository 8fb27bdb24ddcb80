// Thin C surface over LAME for the WASM build: CBR mono MP3 from 16-bit PCM, no tags.
#include <emscripten.h>
#include <lame.h>

EMSCRIPTEN_KEEPALIVE lame_t enc_open(int sample_rate, int kbps, int quality) {
  lame_t gf = lame_init();
  if (!gf) return 0;
  lame_set_num_channels(gf, 1);
  lame_set_mode(gf, MONO);
  lame_set_in_samplerate(gf, sample_rate);
  lame_set_out_samplerate(gf, sample_rate);
  lame_set_VBR(gf, vbr_off);
  lame_set_brate(gf, kbps);
  lame_set_quality(gf, quality);
  lame_set_bWriteVbrTag(gf, 0);
  if (lame_init_params(gf) < 0) {
    lame_close(gf);
    return 0;
  }
  return gf;
}

EMSCRIPTEN_KEEPALIVE int enc_encode(lame_t gf, const short *pcm, int samples, unsigned char *out, int capacity) {
  return lame_encode_buffer(gf, pcm, pcm, samples, out, capacity);
}

EMSCRIPTEN_KEEPALIVE int enc_flush(lame_t gf, unsigned char *out, int capacity) { return lame_encode_flush(gf, out, capacity); }

EMSCRIPTEN_KEEPALIVE void enc_close(lame_t gf) { lame_close(gf); }
