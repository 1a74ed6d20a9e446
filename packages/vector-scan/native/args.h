/*
 * Argument checks shared by the addon's functions: each returns 0 when the value is not what the
 * function takes, so the caller throws a TypeError or RangeError naming the argument.
 */
#ifndef VECTOR_SCAN_ARGS_H
#define VECTOR_SCAN_ARGS_H
#define NAPI_VERSION 8
#include <node_api.h>
#include <math.h>
#include <stddef.h>

static inline napi_value fail(napi_env env, const char *code, const char *message, int range) {
  if (range) napi_throw_range_error(env, code, message);
  else napi_throw_type_error(env, code, message);
  return NULL;
}

/* The data and length of a typed array of the given type, or 0 when the value is not one. */
static inline int typed_array(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  bool is;
  if (napi_is_typedarray(env, value, &is) != napi_ok || !is) return 0;
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, value, &type, length, data, NULL, NULL) != napi_ok) return 0;
  return type == want;
}

static inline int whole_number(napi_env env, napi_value value, double max, size_t *out) {
  double d;
  if (napi_get_value_double(env, value, &d) != napi_ok) return 0;
  if (!(d >= 0 && d <= max) || d != floor(d)) return 0;
  *out = (size_t)d;
  return 1;
}

static inline int finite_number(napi_env env, napi_value value, double *out) {
  return napi_get_value_double(env, value, out) == napi_ok && isfinite(*out);
}

/* The sparse (BM25) top k: sparse.c. */
napi_value js_sparse(napi_env env, napi_callback_info info);
/* Switches sparse.c's sweep to its AVX2 loop (nonzero) or its plain one; scan.c's kernel choice calls it, so one switch (js_kernel) holds for both files. */
void sparse_use_avx2(int on);

#endif
