/* Our layer over libebur128 and minimp3 for JavaScript: heap access, results returned as doubles
 * (NaN on error) instead of through out-pointers, a way to drop a finished meter's audio buffers
 * while keeping what the integrated loudness and true peak need, a true peak that runs the
 * library's interpolator only where it can raise the peak, and MP3 bytes decoded and metered
 * inside the module, so a download is measured without a sample crossing into JavaScript. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

/* The library's translation unit itself, so that its (static) true-peak interpolator is ours to
 * schedule; the library's code is unchanged. */
#include "ebur128.c"

#define MINIMP3_IMPLEMENTATION
#define MINIMP3_FLOAT_OUTPUT
#define MINIMP3_ONLY_MP3
#include "minimp3.h"

#define EXPORT(name) __attribute__((export_name(#name)))

EXPORT(meter_alloc) void* meter_alloc(size_t bytes) { return malloc(bytes); }
EXPORT(meter_free) void meter_free(void* p) { free(p); }

/* ---- Meter: integrated loudness (the library) and true peak (the library's interpolator) ---- */

/* The interpolator's output at a sample depends on that sample and the DELAY - 1 before it. */
#define TP_TAPS 49
#define TP_BLOCK 256

typedef struct {
  ebur128_state* st;   /* EBUR128_MODE_I | EBUR128_MODE_SAMPLE_PEAK */
  interpolator* ip;    /* NULL after meter_finish, or when the rate needs no oversampling */
  double bound;        /* the largest sum of |coefficients| of one phase: |out| <= bound * max|in| */
  double true_peak;    /* the largest |interpolated sample| so far */
  float history[TP_TAPS];   /* the last ip->delay - 1 samples seen */
  int history_len;
  int primed;          /* the interpolator's delay line holds the samples just before the next */
  float* in;           /* TP_BLOCK samples, and the interpolator's output for them: with ip */
  float* out;
} meter;

/* What only adding samples needs: a finished meter (kept by the thousand) goes without. */
static void drop_interpolator(meter* m) {
  if (m->ip) interp_destroy(m->ip);
  free(m->in);
  free(m->out);
  m->ip = NULL;
  m->in = m->out = NULL;
}

static double peak_of(const float* x, size_t n) {
  float p = 0;
  for (size_t i = 0; i < n; i++) {
    float a = fabsf(x[i]);
    if (a > p) p = a;
  }
  return p;
}

/* A mono meter for integrated loudness and true peak; NULL when out of memory or rate invalid.
 * True peak as the library measures it (4x oversampling below 96 kHz, 2x below 192 kHz, its
 * 49-tap interpolator), but a block of samples goes through the interpolator only when the bound
 * says its output could pass the peak found so far: the same peak, for a fraction of the work. */
EXPORT(meter_new) meter* meter_new(unsigned long rate) {
  meter* m = calloc(1, sizeof(meter));
  if (!m) return NULL;
  m->st = ebur128_init(1, rate, EBUR128_MODE_I | EBUR128_MODE_SAMPLE_PEAK);
  if (!m->st) { free(m); return NULL; }
  unsigned factor = rate < 96000 ? 4 : rate < 192000 ? 2 : 0;
  if (factor) {
    m->ip = interp_create(TP_TAPS, factor, 1);
    m->in = malloc(TP_BLOCK * sizeof(float));
    m->out = malloc(TP_BLOCK * factor * sizeof(float));
    if (!m->ip || !m->in || !m->out) { drop_interpolator(m); ebur128_destroy(&m->st); free(m); return NULL; }
    for (unsigned f = 0; f < factor; f++) {
      double s = 0;
      for (unsigned t = 0; t < m->ip->filter[f].count; t++) s += fabs(m->ip->filter[f].coeff[t]);
      if (s > m->bound) m->bound = s;
    }
    /* Float rounding of the output and of the double sum: a hair of room. */
    m->bound *= 1 + 1e-6;
  }
  return m;
}

static void true_peak_block(meter* m, const float* x, size_t n) {
  interpolator* ip = m->ip;
  size_t keep = ip->delay - 1;
  /* Outputs made while these samples enter depend on them and on the keep samples before. */
  double p = peak_of(x, n);
  double h = peak_of(m->history, m->history_len);
  if (m->bound * (p > h ? p : h) > m->true_peak) {
    if (!m->primed) {
      /* The delay line missed skipped samples: refill it with the ones these outputs need (and,
       * this early in the stream, the silence before it, as the library starts from). */
      if ((size_t) m->history_len < keep) {
        memset(ip->z[0], 0, ip->delay * sizeof(float));
        ip->zi = 0;
      }
      memcpy(m->in, m->history, m->history_len * sizeof(float));
      interp_process(ip, m->history_len, m->in, m->out);
    }
    memcpy(m->in, x, n * sizeof(float));
    size_t outs = interp_process(ip, n, m->in, m->out);
    for (size_t i = 0; i < outs; i++) {
      double v = fabs((double) m->out[i]);
      if (v > m->true_peak) m->true_peak = v;
    }
    m->primed = 1;
  } else {
    m->primed = 0;
  }
  if (n >= keep) {
    memcpy(m->history, x + n - keep, keep * sizeof(float));
    m->history_len = (int) keep;
  } else {
    size_t old = (size_t) m->history_len < keep - n ? (size_t) m->history_len : keep - n;
    memmove(m->history, m->history + m->history_len - old, old * sizeof(float));
    memcpy(m->history + old, x, n * sizeof(float));
    m->history_len = (int) (old + n);
  }
}

static int meter_add_samples(meter* m, const float* x, size_t frames) {
  int err = ebur128_add_frames_float(m->st, x, frames);
  if (err) return err;
  if (m->ip)
    for (size_t at = 0; at < frames; at += TP_BLOCK) true_peak_block(m, x + at, frames - at < TP_BLOCK ? frames - at : TP_BLOCK);
  return 0;
}

EXPORT(meter_add) int meter_add(meter* m, const float* samples, size_t frames) {
  return meter_add_samples(m, samples, frames);
}

/* After the last samples: the filter, ring buffer and interpolator are only needed to add more
 * audio. Re-initialising the library's state for the lowest rate it accepts keeps the gating
 * blocks and peaks (same channel count) and shrinks it from ~270 KB to ~1 KB. */
EXPORT(meter_finish) int meter_finish(meter* m) {
  drop_interpolator(m);
  if (m->st->samplerate == 16) return EBUR128_SUCCESS;
  return ebur128_change_parameters(m->st, 1, 16);
}

EXPORT(meter_loudness) double meter_loudness(meter* m) {
  double out;
  return ebur128_loudness_global(m->st, &out) == EBUR128_SUCCESS ? out : NAN;
}

/* Gated over every block of every meter, as one programme. */
EXPORT(meter_loudness_multiple) double meter_loudness_multiple(meter** ms, size_t count) {
  ebur128_state** sts = malloc(count * sizeof(ebur128_state*));
  if (!sts) return NAN;
  for (size_t i = 0; i < count; i++) sts[i] = ms[i]->st;
  double out;
  int err = ebur128_loudness_global_multiple(sts, count, &out);
  free(sts);
  return err == EBUR128_SUCCESS ? out : NAN;
}

/* Linear, full scale 1: the larger of true peak and sample peak, as the library reports it. */
EXPORT(meter_true_peak) double meter_true_peak(meter* m) {
  double sample;
  if (ebur128_sample_peak(m->st, 0, &sample) != EBUR128_SUCCESS) return NAN;
  return m->true_peak > sample ? m->true_peak : sample;
}

EXPORT(meter_destroy) void meter_destroy(meter* m) {
  if (!m) return;
  drop_interpolator(m);
  ebur128_destroy(&m->st);
  free(m);
}

/* A finished meter's figures, to keep beside a cached chunk: its true peak, its sample peak and
 * the energy of every 400 ms gating block, in that order, as doubles. meter_blocks says how many
 * blocks; out has room for two more doubles. */
EXPORT(meter_blocks) size_t meter_blocks(meter* m) { return m->st->d->block_list_size; }

EXPORT(meter_export) void meter_export(meter* m, double* out) {
  struct ebur128_dq_entry* it;
  out[0] = m->true_peak;
  out[1] = m->st->d->sample_peak[0];
  size_t i = 2;
  STAILQ_FOREACH(it, &m->st->d->block_list, entries) out[i++] = it->z;
}

/* A finished meter with what meter_export wrote; NULL when out of memory. */
EXPORT(meter_import) meter* meter_import(const double* in, size_t blocks) {
  meter* m = calloc(1, sizeof(meter));
  if (!m) return NULL;
  m->st = ebur128_init(1, 16, EBUR128_MODE_I | EBUR128_MODE_SAMPLE_PEAK);
  if (!m->st) { free(m); return NULL; }
  m->true_peak = in[0];
  m->st->d->sample_peak[0] = in[1];
  for (size_t i = 0; i < blocks; i++) {
    struct ebur128_dq_entry* block = malloc(sizeof(struct ebur128_dq_entry));
    if (!block) { meter_destroy(m); return NULL; }
    block->z = in[2 + i];
    STAILQ_INSERT_TAIL(&m->st->d->block_list, block, entries);
    m->st->d->block_list_size++;
  }
  return m;
}

/* ---- An MP3 stream, decoded and metered as its bytes arrive ---- */

/* Enough for the next frame and the header after it, which the decoder checks before it trusts a
 * frame: until the end of the stream, this much stays undecoded. */
#define LOOKAHEAD (2 * MAX_FREE_FORMAT_FRAME_SIZE + 16)

typedef struct {
  mp3dec_t dec;
  meter* m;
  unsigned char* buf;   /* bytes not yet decoded */
  size_t len, cap;
  size_t skip;          /* bytes of an ID3v2 tag still to drop */
  int seen_start;       /* the first bytes were checked for a tag */
  int first_frame;      /* the next decoded frame is the first (maybe a Xing/Info header) */
  unsigned long rate;
  unsigned long long samples;
  int error;            /* 1: out of memory, 2: the sample rate changed */
  float pcm[MINIMP3_MAX_SAMPLES_PER_FRAME];
} mp3_stream;

EXPORT(mp3_new) mp3_stream* mp3_new(void) {
  mp3_stream* s = calloc(1, sizeof(mp3_stream));
  if (!s) return NULL;
  mp3dec_init(&s->dec);
  s->first_frame = 1;
  return s;
}

/* Room for n more bytes; returns where to write them (NULL when out of memory). */
EXPORT(mp3_reserve) unsigned char* mp3_reserve(mp3_stream* s, size_t n) {
  if (s->len + n > s->cap) {
    size_t cap = s->cap ? s->cap : 65536;
    while (cap < s->len + n) cap *= 2;
    unsigned char* b = realloc(s->buf, cap);
    if (!b) return NULL;
    s->buf = b;
    s->cap = cap;
  }
  return s->buf + s->len;
}

/* A frame whose side information is followed by a "Xing" or "Info" tag carries the encoder's
 * header, not audio. */
static int is_info_frame(const unsigned char* f, int bytes) {
  int mono = (f[3] & 0xC0) == 0xC0;
  int mpeg1 = f[1] & 0x08;
  int at = 4 + (mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17));
  if (bytes < at + 4) return 0;
  return !memcmp(f + at, "Xing", 4) || !memcmp(f + at, "Info", 4);
}

static void decode(mp3_stream* s, int final) {
  size_t pos = 0;
  if (!s->seen_start) {
    if (s->len < 10 && !final) return;
    s->seen_start = 1;
    if (s->len >= 10 && !memcmp(s->buf, "ID3", 3)) {
      const unsigned char* h = s->buf;
      s->skip = 10 + ((size_t) (h[6] & 0x7f) << 21 | (h[7] & 0x7f) << 14 | (h[8] & 0x7f) << 7 | (h[9] & 0x7f)) + (h[5] & 0x10 ? 10 : 0);
    }
  }
  if (s->skip) {
    size_t n = s->skip < s->len ? s->skip : s->len;
    pos += n;
    s->skip -= n;
  }
  while (!s->error && (final ? pos < s->len : s->len - pos > LOOKAHEAD)) {
    mp3dec_frame_info_t info = {0};
    int n = mp3dec_decode_frame(&s->dec, s->buf + pos, (int) (s->len - pos), s->pcm, &info);
    if (info.frame_bytes == 0) break; /* not a whole frame yet */
    const unsigned char* frame = s->buf + pos + info.frame_offset;
    pos += info.frame_bytes;
    if (info.hz == 0) continue;  /* bytes that are no frame, skipped */
    if (n == 0) {
      /* A frame whose bit reservoir reaches before the stream (a cut from the middle of one):
       * players play its time as silence, and so it is counted. */
      n = hdr_frame_samples(frame);
      memset(s->pcm, 0, (size_t) n * info.channels * sizeof(float));
    }
    if (s->first_frame) {
      s->first_frame = 0;
      if (is_info_frame(frame, info.frame_bytes - info.frame_offset)) continue;
    }
    if (!s->m) {
      s->rate = info.hz;
      s->m = meter_new(info.hz);
      if (!s->m) { s->error = 1; break; }
    } else if ((unsigned long) info.hz != s->rate) {
      s->error = 2;
      break;
    }
    if (info.channels == 2) {
      /* Measured as mono, as the file is published: the two channels' mean (exact when equal). */
      for (int i = 0; i < n; i++) s->pcm[i] = (s->pcm[2 * i] + s->pcm[2 * i + 1]) / 2;
    }
    if (meter_add_samples(s->m, s->pcm, n)) { s->error = 1; break; }
    s->samples += n;
  }
  memmove(s->buf, s->buf + pos, s->len - pos);
  s->len -= pos;
}

/* The n bytes written at mp3_reserve's address are the stream's next. Returns 0, or the error. */
EXPORT(mp3_push) int mp3_push(mp3_stream* s, size_t n) {
  s->len += n;
  decode(s, 0);
  return s->error;
}

/* The end of the stream: decodes what is left. Returns 0, or the error. */
EXPORT(mp3_end) int mp3_end(mp3_stream* s) {
  decode(s, 1);
  return s->error;
}

EXPORT(mp3_sample_rate) unsigned long mp3_sample_rate(mp3_stream* s) { return s->rate; }
EXPORT(mp3_samples) double mp3_samples(mp3_stream* s) { return (double) s->samples; }

/* Hands the meter over (NULL when no audio was decoded) and frees the stream. */
EXPORT(mp3_take_meter) meter* mp3_take_meter(mp3_stream* s) {
  meter* m = s->m;
  s->m = NULL;
  free(s->buf);
  free(s);
  return m;
}

EXPORT(mp3_destroy) void mp3_destroy(mp3_stream* s) {
  meter_destroy(mp3_take_meter(s));
}
