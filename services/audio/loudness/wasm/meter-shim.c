/* Our thin layer over libebur128 for JavaScript: heap access, results returned as doubles
 * (NaN on error) instead of through out-pointers, and a way to drop a finished meter's
 * audio buffers while keeping what the integrated loudness and true peak need. */
#include <stdlib.h>
#include <math.h>
#include "ebur128.h"

#define EXPORT(name) __attribute__((export_name(#name)))

EXPORT(meter_alloc) void* meter_alloc(size_t bytes) { return malloc(bytes); }
EXPORT(meter_free) void meter_free(void* p) { free(p); }

/* A mono meter for integrated loudness and true peak; NULL when out of memory or rate invalid. */
EXPORT(meter_new) ebur128_state* meter_new(unsigned long rate) {
  return ebur128_init(1, rate, EBUR128_MODE_I | EBUR128_MODE_TRUE_PEAK);
}

EXPORT(meter_add) int meter_add(ebur128_state* st, const float* samples, size_t frames) {
  return ebur128_add_frames_float(st, samples, frames);
}

/* After the last samples: the filter, ring buffer and resampler are only needed to add more
 * audio. Re-initialising them for the lowest rate the library accepts keeps the gating blocks
 * and peaks (same channel count) and shrinks the state from ~270 KB to ~1 KB. */
EXPORT(meter_finish) int meter_finish(ebur128_state* st) {
  if (st->samplerate == 16) return EBUR128_SUCCESS;
  return ebur128_change_parameters(st, 1, 16);
}

EXPORT(meter_loudness) double meter_loudness(ebur128_state* st) {
  double out;
  return ebur128_loudness_global(st, &out) == EBUR128_SUCCESS ? out : NAN;
}

/* Gated over every block of every state, as one programme. */
EXPORT(meter_loudness_multiple) double meter_loudness_multiple(ebur128_state** sts, size_t count) {
  double out;
  return ebur128_loudness_global_multiple(sts, count, &out) == EBUR128_SUCCESS ? out : NAN;
}

/* Linear, full scale 1 (the larger of true peak and sample peak, as the library reports it). */
EXPORT(meter_true_peak) double meter_true_peak(ebur128_state* st) {
  double out;
  return ebur128_true_peak(st, 0, &out) == EBUR128_SUCCESS ? out : NAN;
}

EXPORT(meter_destroy) void meter_destroy(ebur128_state* st) {
  if (st) ebur128_destroy(&st);
}
