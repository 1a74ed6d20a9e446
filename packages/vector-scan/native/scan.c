/*
 * The exact int8 scan of the embedded index: for one quantized query, the `k` best of a block of
 * int8 codes (`total` rows of `dimension` bytes), by inner product or by cosine, keeping only the
 * current best k in a heap as it goes, so a scan touches each code once and sorts k entries, not
 * all of them. An optional list of slots (ascending) restricts the scan to those rows, at a cost
 * in proportion to the list, not to the block.
 *
 * Ties rank by slot (the lower first), so the result depends on the codes alone. The dot product
 * runs with AVX2 where the CPU has it (chosen at load), else as a plain loop the compiler
 * vectorizes for the target (SSE2 on x86-64, NEON on arm64).
 *
 * The addon's other function, the sparse (BM25) top k, is in sparse.c; this file registers both.
 */
#include "args.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VECTOR_SCAN_X86 1
#endif

static inline int32_t dot_plain(const int8_t *a, const int8_t *b, size_t n) {
  int32_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += (int32_t)a[i] * (int32_t)b[i];
  return sum;
}

#ifdef VECTOR_SCAN_X86
/* Bytes from index r on: 16 - r zeros, then r ones (keeps the last r bytes of 16). */
static const int8_t tail_keep[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

/*
 * 16 bytes at a time: widened to int16, multiplied and summed in pairs into eight int32 lanes. The
 * last n % 16 bytes come from one load of the final 16, the bytes already counted zeroed (n >= 16).
 */
__attribute__((target("avx2"), always_inline)) static inline int32_t dot_avx2(const int8_t *a, const int8_t *b, size_t n) {
  if (n < 16) return dot_plain(a, b, n);
  __m256i acc = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
  }
  if (i < n) {
    __m128i keep = _mm_loadu_si128((const __m128i *)(tail_keep + (n - i)));
    __m256i x = _mm256_cvtepi8_epi16(_mm_and_si128(keep, _mm_loadu_si128((const __m128i *)(a + n - 16))));
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + n - 16)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}
#endif

typedef struct {
  double score;
  uint32_t slot;
} entry;

/* Whether a ranks below b: a lower score, or the same score and a higher slot. */
static inline int below(const entry *a, const entry *b) {
  return a->score < b->score || (a->score == b->score && a->slot > b->slot);
}

/* A heap with the lowest-ranked kept entry at the root. */
static void sift_down(entry *heap, size_t n, size_t i) {
  for (;;) {
    size_t worst = i, l = 2 * i + 1, r = l + 1;
    if (l < n && below(&heap[l], &heap[worst])) worst = l;
    if (r < n && below(&heap[r], &heap[worst])) worst = r;
    if (worst == i) return;
    entry t = heap[i];
    heap[i] = heap[worst];
    heap[worst] = t;
    i = worst;
  }
}

static void sift_up(entry *heap, size_t i) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!below(&heap[i], &heap[parent])) return;
    entry t = heap[i];
    heap[i] = heap[parent];
    heap[parent] = t;
    i = parent;
  }
}

static int by_rank(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return below(x, y) ? 1 : below(y, x) ? -1 : 0;
}

/*
 * The scan, written once and compiled per dot product kernel (an indirect call per row would cost
 * as much as the dot product): fills `heap` (room for k) with the best rows and returns how many it
 * holds. Slots rise as the scan goes, so once the heap is full a row ties its worst only with a
 * higher slot: only a strictly higher score gets in.
 */
#define SCAN_BODY(DOT)                                                   \
  size_t n = 0;                                                          \
  for (size_t i = 0; i < count; i++) {                                   \
    size_t slot = list ? list[i] : i;                                    \
    const int8_t *row = codes + slot * dimension;                        \
    double score = (double)DOT(query, row, dimension);                   \
    if (cosine) {                                                        \
      int32_t norm = DOT(row, row, dimension);                           \
      score = norm > 0 ? score / sqrt((double)norm) : 0.0;               \
    }                                                                    \
    if (n < k) {                                                         \
      heap[n].score = score;                                             \
      heap[n].slot = (uint32_t)slot;                                     \
      sift_up(heap, n++);                                                \
    } else if (score > heap[0].score) {                                  \
      heap[0].score = score;                                             \
      heap[0].slot = (uint32_t)slot;                                     \
      sift_down(heap, n, 0);                                             \
    }                                                                    \
  }                                                                      \
  return n;

#define SCAN_ARGS                                                                                           \
  const int8_t *codes, size_t dimension, const int8_t *query, const uint32_t *list, size_t count, int cosine, entry *heap, \
      size_t k

static size_t scan_plain(SCAN_ARGS) { SCAN_BODY(dot_plain) }

#ifdef VECTOR_SCAN_X86
__attribute__((target("avx2"))) static size_t scan_avx2(SCAN_ARGS) { SCAN_BODY(dot_avx2) }
#endif

typedef size_t (*scan_fn)(SCAN_ARGS);
static scan_fn scan = scan_plain;
static const char *kernel = "plain";

/* Once per process: the addon loads again in each worker thread, and must not undo a switch (js_kernel). */
static void choose_kernel(void) {
  static int chosen = 0;
  if (chosen) return;
  chosen = 1;
#ifdef VECTOR_SCAN_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    scan = scan_avx2;
    kernel = "avx2";
  }
#endif
}

/* scan(codes: Int8Array, total, dimension, query: Int8Array, k, cosine: boolean, slots?: Uint32Array) -> Uint32Array */
static napi_value js_scan(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 6) return fail(env, "ERR_VECTOR_SCAN_ARGS", "scan(codes, total, dimension, query, k, cosine[, slots]) takes 6 or 7 arguments", 0);

  void *codes, *query, *list = NULL;
  size_t codes_length, query_length, list_length = 0, total, dimension, k;
  bool cosine;
  if (!typed_array(env, argv[0], napi_int8_array, &codes, &codes_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "codes must be an Int8Array", 0);
  if (!whole_number(env, argv[1], 4294967295.0, &total)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "total must be a whole number below 2^32", 1);
  if (!whole_number(env, argv[2], 65536.0, &dimension) || dimension == 0) return fail(env, "ERR_VECTOR_SCAN_ARGS", "dimension must be a whole number from 1 to 65536", 1);
  if (!typed_array(env, argv[3], napi_int8_array, &query, &query_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "query must be an Int8Array", 0);
  if (!whole_number(env, argv[4], 4294967295.0, &k)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "k must be a whole number", 1);
  if (napi_get_value_bool(env, argv[5], &cosine) != napi_ok) return fail(env, "ERR_VECTOR_SCAN_ARGS", "cosine must be a boolean", 0);
  if (argc >= 7) {
    napi_valuetype kind;
    napi_typeof(env, argv[6], &kind);
    if (kind != napi_undefined && kind != napi_null && !typed_array(env, argv[6], napi_uint32_array, &list, &list_length))
      return fail(env, "ERR_VECTOR_SCAN_ARGS", "slots must be a Uint32Array", 0);
  }
  if (query_length != dimension) return fail(env, "ERR_VECTOR_SCAN_ARGS", "query must hold dimension codes", 1);
  if (codes_length / dimension < total) return fail(env, "ERR_VECTOR_SCAN_ARGS", "codes must hold total * dimension codes", 1);
  /* Slots ascending (ties rank by slot: see SCAN_BODY) and below total (never a read past the codes). */
  for (size_t i = 0; list && i < list_length; i++) {
    uint32_t slot = ((const uint32_t *)list)[i];
    if (slot >= total || (i > 0 && slot <= ((const uint32_t *)list)[i - 1]))
      return fail(env, "ERR_VECTOR_SCAN_ARGS", "slots must ascend and be below total", 1);
  }
  size_t count = list ? list_length : total;

  if (k > count) k = count;
  entry *heap = k > 0 ? malloc(k * sizeof(entry)) : NULL;
  if (k > 0 && !heap) return fail(env, "ERR_VECTOR_SCAN_MEMORY", "out of memory", 1);
  size_t n = k > 0 ? scan(codes, dimension, query, list, count, cosine, heap, k) : 0;
  qsort(heap, n, sizeof(entry), by_rank);

  napi_value buffer, result;
  void *out;
  if (napi_create_arraybuffer(env, n * sizeof(uint32_t), &out, &buffer) != napi_ok) {
    free(heap);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) ((uint32_t *)out)[i] = heap[i].slot;
  free(heap);
  napi_create_typedarray(env, napi_uint32_array, n, buffer, 0, &result);
  return result;
}

/* kernel([name]) -> the kernel in use, after switching to `name` ("plain", or "avx2" where the CPU has it). */
static napi_value js_kernel(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc >= 1) {
    char name[16];
    size_t length;
    if (napi_get_value_string_utf8(env, argv[0], name, sizeof(name), &length) != napi_ok)
      return fail(env, "ERR_VECTOR_SCAN_ARGS", "kernel name must be a string", 0);
    if (strcmp(name, "plain") == 0) {
      scan = scan_plain;
      kernel = "plain";
    } else {
#ifdef VECTOR_SCAN_X86
      if (strcmp(name, "avx2") != 0 || !__builtin_cpu_supports("avx2"))
        return fail(env, "ERR_VECTOR_SCAN_ARGS", "no such kernel on this CPU", 1);
      scan = scan_avx2;
      kernel = "avx2";
#else
      return fail(env, "ERR_VECTOR_SCAN_ARGS", "no such kernel on this CPU", 1);
#endif
    }
  }
  napi_value result;
  napi_create_string_utf8(env, kernel, NAPI_AUTO_LENGTH, &result);
  return result;
}

NAPI_MODULE_INIT() {
  choose_kernel();
  napi_property_descriptor properties[] = {
      {"scan", NULL, js_scan, NULL, NULL, NULL, napi_enumerable, NULL},
      {"kernel", NULL, js_kernel, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sparse", NULL, js_sparse, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}
