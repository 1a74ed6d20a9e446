/*
 * The exact int8 scan of the embedded index: for one quantized query, the `k` best of a block of
 * int8 codes (`total` rows of `dimension` bytes), by inner product or by cosine, keeping only the
 * rows that may still be among the best k as it goes, so a scan touches each code once and sorts
 * k entries, not all of them. An optional list of slots (ascending) restricts the scan to those
 * rows, at a cost in proportion to the list, not to the block.
 *
 * Ties rank by slot (the lower first), so the result depends on the codes alone. The dot product
 * runs with AVX2 where the CPU has it (chosen at load), else as a plain loop the compiler
 * vectorizes for the target (SSE2 on x86-64, NEON on arm64). With AVX2, a scan by inner product of
 * 32 dimensions or more takes four rows at a time (scan_products_avx2; see scan_avx2 for when):
 * the same whole-number products, so the same result.
 *
 * Beside the scan, the estimates and products that rank its candidates by the full-precision query
 * (PLAIN_DOT and its AVX2 twins). The sparse (BM25) top k is in sparse.c; this file registers them all.
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

/* Bytes from index r on: 32 - r zeros, then r ones (keeps the last r bytes of 32). */
static const int8_t tail_keep32[64] = {0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
                                       0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

/*
 * A row's products with the query, summed into eight int32 lanes 32 bytes at a time (dot_avx2 takes
 * 16): maddubs multiplies unsigned bytes by signed ones, so each row byte goes in as its magnitude
 * and the query byte takes the row byte's sign. Exact while the query holds no -128, whose negation
 * does not fit a byte (the caller checks): a pair of products is then at most 2 * 128 * 127, within
 * maddubs' int16. The last n % 32 bytes come from one load of the final 32 (n >= 32), the row bytes
 * already counted zeroed.
 */
__attribute__((target("avx2"), always_inline)) static inline __m256i lanes_avx2(const int8_t *query, const int8_t *row, size_t n) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i x = _mm256_loadu_si256((const __m256i *)(row + i));
    __m256i y = _mm256_loadu_si256((const __m256i *)(query + i));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(y, x)), ones));
  }
  if (i < n) {
    __m256i keep = _mm256_loadu_si256((const __m256i *)(tail_keep32 + (n - i)));
    __m256i x = _mm256_and_si256(keep, _mm256_loadu_si256((const __m256i *)(row + n - 32)));
    __m256i y = _mm256_loadu_si256((const __m256i *)(query + n - 32));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(y, x)), ones));
  }
  return acc;
}

/*
 * Four rows' products with the query (n >= 32, no -128 in the query: see lanes_avx2), their lanes
 * summed together: two rounds of horizontal adds and one add of the halves, where summing each
 * row's lanes alone costs as much as its products at 100 dimensions.
 */
__attribute__((target("avx2"), always_inline)) static inline __m128i dot4_avx2(const int8_t *query, const int8_t *r0, const int8_t *r1,
                                                                               const int8_t *r2, const int8_t *r3, size_t n) {
  __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(lanes_avx2(query, r0, n), lanes_avx2(query, r1, n)),
                                _mm256_hadd_epi32(lanes_avx2(query, r2, n), lanes_avx2(query, r3, n)));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}
#endif

typedef struct {
  double score;
  uint32_t slot;
} entry;

/*
 * A scan reads its rows in ascending order, and at 100k rows they are ~10 MB, more than the CPU caches
 * keep between searches: while rows are multiplied, those ~4 KiB on (every row's, or the listed
 * ones') are asked for, each cache line of them, within the block only: the four-row scan waits on
 * memory, which the hardware's own prefetcher does not hide. The row-at-a-time kernels (SCAN_BODY:
 * cosine, the plain loop) wait on their arithmetic instead and gain nothing from it, so they go
 * without.
 */
static inline size_t prefetch_rows(size_t dimension) { return dimension < 1024 ? (4096 / dimension + 3) & ~(size_t)3 : 4; }
/* Every cache line of row[0..bytes), bytes >= 1. */
static inline void prefetch_row(const int8_t *row, size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
  for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(row + at, 0, 3);
  __builtin_prefetch(row + bytes - 1, 0, 3);
#else
  (void)row;
  (void)bytes;
#endif
}

/* Whether a ranks below b: a lower score, or the same score and a higher slot. */
static inline int below(const entry *a, const entry *b) {
  return a->score < b->score || (a->score == b->score && a->slot > b->slot);
}

static inline void swap_entries(entry *a, entry *b) {
  entry t = *a;
  *a = *b;
  *b = t;
}

/*
 * Partitions e[lo..hi) (two entries or more) around the median of its first, middle and last:
 * returns where that pivot ends, the entries before it ranking above it and those after, below.
 * Ranks are strict (slots differ), so each partition splits cleanly.
 */
static size_t partition(entry *e, size_t lo, size_t hi) {
  size_t mid = lo + (hi - lo) / 2, last = hi - 1;
  if (below(&e[mid], &e[lo])) swap_entries(&e[mid], &e[lo]);
  if (below(&e[last], &e[lo])) swap_entries(&e[last], &e[lo]);
  if (below(&e[last], &e[mid])) swap_entries(&e[last], &e[mid]);
  /* e[lo] ranks lowest of the three, e[last] highest: the median to the end as the pivot */
  swap_entries(&e[mid], &e[last]);
  const entry pivot = e[last];
  size_t store = lo;
  for (size_t i = lo; i < last; i++) {
    if (below(&pivot, &e[i])) swap_entries(&e[i], &e[store++]);
  }
  swap_entries(&e[store], &e[last]);
  return store;
}

/* Reorders e[0..n) so that its k best come first, in no order (0 < k < n): a quickselect. */
static void select_best(entry *e, size_t n, size_t k) {
  size_t lo = 0, hi = n; /* the k-th best lies in e[lo..hi) */
  while (hi - lo > 1) {
    size_t at = partition(e, lo, hi);
    if (at == k || at + 1 == k) return;
    if (at > k) hi = at;
    else lo = at + 1;
  }
}

/*
 * Sorts e[0..n) best first: quicksort down to runs of 16, then insertion, the comparison inlined
 * (qsort calls a function for each, which dominates a scan that keeps most of its rows).
 */
static void sort_best(entry *e, size_t n) {
  while (n > 16) {
    size_t at = partition(e, 0, n);
    /* the smaller side by recursion, the larger by the loop: the stack stays logarithmic */
    if (at < n - at - 1) {
      sort_best(e, at);
      e += at + 1;
      n -= at + 1;
    } else {
      sort_best(e + at + 1, n - at - 1);
      n = at;
    }
  }
  for (size_t i = 1; i < n; i++) {
    entry x = e[i];
    size_t j = i;
    for (; j > 0 && below(&e[j - 1], &x); j--) e[j] = e[j - 1];
    e[j] = x;
  }
}

/* Offers a scored row to the scan's kept rows (see SCAN_BODY): appended when above the threshold, the best k selected when they fill `room`. */
static inline void offer(entry *kept, size_t *n, double *threshold, size_t room, size_t k, double score, size_t slot) {
  if (score <= *threshold) return;
  kept[*n].score = score;
  kept[*n].slot = (uint32_t)slot;
  if (++*n == room) {
    select_best(kept, *n, k);
    *n = k;
    *threshold = kept[0].score;
    for (size_t j = 1; j < k; j++)
      if (kept[j].score < *threshold) *threshold = kept[j].score;
  }
}

/*
 * The scan, written once and compiled per dot product kernel (an indirect call per row would cost
 * as much as the dot product): fills `kept` with the best rows, at most k, and returns how many.
 * A row above the threshold is appended; when `room` rows are kept, a quickselect keeps the best k
 * and the threshold rises to the lowest of them. Appending costs a store where a heap of k costs
 * ~log2(k) unpredictable branches per row taken. Slots rise as
 * the scan goes, so a row that ties the threshold ranks below the kept row it ties, whose slot is
 * lower: only a strictly higher score gets in.
 */
#define SCAN_BODY(DOT)                                                   \
  size_t n = 0;                                                          \
  double threshold = -INFINITY;                                          \
  for (size_t i = 0; i < count; i++) {                                   \
    size_t slot = list ? list[i] : i;                                    \
    const int8_t *row = codes + slot * dimension;                        \
    double score = (double)DOT(query, row, dimension);                   \
    if (cosine) {                                                        \
      int32_t norm = DOT(row, row, dimension);                           \
      score = norm > 0 ? score / sqrt((double)norm) : 0.0;               \
    }                                                                    \
    offer(kept, &n, &threshold, room, k, score, slot);                   \
  }                                                                      \
  if (n > k) {                                                           \
    select_best(kept, n, k);                                             \
    n = k;                                                               \
  }                                                                      \
  return n;

#define SCAN_ARGS                                                                                           \
  const int8_t *codes, size_t dimension, const int8_t *query, const uint32_t *list, size_t count, int cosine, entry *kept, \
      size_t room, size_t k

static size_t scan_plain(SCAN_ARGS) { SCAN_BODY(dot_plain) }

#ifdef VECTOR_SCAN_X86
/*
 * SCAN_BODY by inner product, four rows at a time (dot4_avx2), offered in slot order as there; the
 * rows are the first `count` or, with `list`, those it names (a loop for each, so neither tests which per row).
 */
#define SCAN_PRODUCTS(SLOT, PREFETCH)                                                                                            \
  for (; i + 4 <= count; i += 4) {                                                                                              \
    size_t s0 = SLOT(i), s1 = SLOT(i + 1), s2 = SLOT(i + 2), s3 = SLOT(i + 3);                                                  \
    PREFETCH(i);                                                                                                                \
    __m128i four = dot4_avx2(query, codes + s0 * dimension, codes + s1 * dimension, codes + s2 * dimension,                    \
                             codes + s3 * dimension, dimension);                                                                \
    /* (most groups have no row above the threshold: one compare of the four, no row offered) */                               \
    if (!_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(four, _mm_set1_epi32(bar))))) continue;                              \
    int32_t dots[4];                                                                                                            \
    _mm_storeu_si128((__m128i *)dots, four);                                                                                    \
    offer(kept, &n, &threshold, room, k, (double)dots[0], s0);                                                                  \
    offer(kept, &n, &threshold, room, k, (double)dots[1], s1);                                                                  \
    offer(kept, &n, &threshold, room, k, (double)dots[2], s2);                                                                  \
    offer(kept, &n, &threshold, room, k, (double)dots[3], s3);                                                                  \
    bar = threshold > (double)INT32_MIN ? (int32_t)threshold : INT32_MIN;                                                       \
  }                                                                                                                             \
  for (; i < count; i++) offer(kept, &n, &threshold, room, k, (double)dot_avx2(query, codes + SLOT(i) * dimension, dimension), SLOT(i));
#define LISTED_SLOT(i) ((size_t)list[i])
#define EVERY_SLOT(i) (i)
/* (see prefetch_rows: four rows a step, as four rows are multiplied) */
#define PREFETCH_AHEAD(i)                                                                 \
  if ((i) + ahead + 4 <= count) prefetch_row(codes + ((i) + ahead) * dimension, 4 * dimension);
#define PREFETCH_LISTED(i)                                                                \
  if ((i) + ahead + 4 <= count)                                                           \
    for (size_t j = 0; j < 4; j++) prefetch_row(codes + (size_t)list[(i) + ahead + j] * dimension, dimension);
__attribute__((target("avx2"))) static size_t scan_products_avx2(SCAN_ARGS) {
  size_t n = 0, i = 0;
  double threshold = -INFINITY;
  /* The threshold as an int32 (products are whole numbers, |product| < 2^31 up to 65536 dimensions), or below every product. */
  int32_t bar = INT32_MIN;
  size_t ahead = prefetch_rows(dimension);
  (void)cosine;
  if (list) {
    SCAN_PRODUCTS(LISTED_SLOT, PREFETCH_LISTED)
  } else {
    SCAN_PRODUCTS(EVERY_SLOT, PREFETCH_AHEAD)
  }
  if (n > k) {
    select_best(kept, n, k);
    n = k;
  }
  return n;
}
#undef SCAN_PRODUCTS
#undef LISTED_SLOT
#undef PREFETCH_AHEAD
#undef PREFETCH_LISTED
#undef EVERY_SLOT

/* By inner product, four rows at a time where the kernel applies (32 dimensions or more, no -128 in the query: quantize's codes never hold it); else a row at a time. */
__attribute__((target("avx2"))) static size_t scan_avx2(SCAN_ARGS) {
  if (!cosine && dimension >= 32 && memchr(query, -128, dimension) == NULL) return scan_products_avx2(codes, dimension, query, list, count, cosine, kept, room, k);
  SCAN_BODY(dot_avx2)
}
#endif

/* The eight lanes of the dot products below, summed in their fixed order. */
static inline double sum_lanes(const double a[8]) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/*
 * A row's inner product with a query of doubles, each component converted by VALUE: eight lanes
 * (dimension d in lane d % 8) over the whole blocks of 8, summed by sum_lanes, then the last
 * dimension % 8 one by one. The AVX2 kernels add in the same order, so every kernel gives the same
 * bits. For an int8 row (8 by 24 significant bits) or a half's (11 by 24) each product is exact in
 * double, and so is their sum while the query's nonzero components span less than ~13 binary orders
 * of magnitude (at 384 dimensions): then the same values as the JS loops these replaced, which
 * added in another order, and otherwise within a double's rounding of them.
 */
#define PLAIN_DOT(NAME, TYPE, VALUE)                                                                 \
  static double NAME(const TYPE *row, const double *query, size_t n) {                               \
    double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                          \
    size_t d = 0;                                                                                    \
    for (; d + 8 <= n; d += 8)                                                                       \
      for (size_t j = 0; j < 8; j++) a[j] += (double)VALUE(row[d + j]) * query[d + j];               \
    double sum = sum_lanes(a);                                                                       \
    for (; d < n; d++) sum += (double)VALUE(row[d]) * query[d];                                      \
    return sum;                                                                                      \
  }
#define AS_IS(x) (x)

/* A half's value (IEEE binary16: 1 sign, 5 exponent, 10 fraction bits), exactly. */
static inline float half_value(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff, bits;
  if (exponent == 0x1f) bits = sign | 0x7f800000 | (fraction << 13);
  else if (exponent != 0) bits = sign | ((exponent + 112) << 23) | (fraction << 13);
  else if (fraction == 0) bits = sign;
  else {
    /* subnormal: normalise */
    exponent = 113;
    while (!(fraction & 0x400)) {
      fraction <<= 1;
      exponent--;
    }
    bits = sign | (exponent << 23) | ((fraction & 0x3ff) << 13);
  }
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

/* The float query's estimate of an int8 row (the caller multiplies by the row's scale). */
PLAIN_DOT(estimate_plain, int8_t, AS_IS)
/* The query's product with a vector of halves, as the index stores full-precision vectors. */
PLAIN_DOT(halves_plain, uint16_t, half_value)
/* The query's product with a vector of floats. */
PLAIN_DOT(floats_dot, float, AS_IS)

#ifdef VECTOR_SCAN_X86
/* sum_lanes of lanes 0-3 in a and 4-7 in b. */
__attribute__((target("avx2"), always_inline)) static inline double sum_lanes_avx2(__m256d a, __m256d b) {
  __m256d s = _mm256_add_pd(a, b); /* l0+l4, l1+l5, l2+l6, l3+l7 */
  __m128d p = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
  return _mm_cvtsd_f64(p) + _mm_cvtsd_f64(_mm_unpackhi_pd(p, p));
}

__attribute__((target("avx2"))) static double estimate_avx2(const int8_t *row, const double *query, size_t n) {
  __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd();
  size_t d = 0;
  for (; d + 8 <= n; d += 8) {
    __m128i c = _mm_loadl_epi64((const __m128i *)(row + d));
    __m256d low = _mm256_cvtepi32_pd(_mm_cvtepi8_epi32(c));
    __m256d high = _mm256_cvtepi32_pd(_mm_cvtepi8_epi32(_mm_srli_si128(c, 4)));
    a = _mm256_add_pd(a, _mm256_mul_pd(low, _mm256_loadu_pd(query + d)));
    b = _mm256_add_pd(b, _mm256_mul_pd(high, _mm256_loadu_pd(query + d + 4)));
  }
  double sum = sum_lanes_avx2(a, b);
  for (; d < n; d++) sum += (double)row[d] * query[d];
  return sum;
}

/* With F16C, eight halves become floats in one instruction. */
__attribute__((target("avx2,f16c"))) static double halves_avx2(const uint16_t *row, const double *query, size_t n) {
  __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd();
  size_t d = 0;
  for (; d + 8 <= n; d += 8) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + d)));
    a = _mm256_add_pd(a, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), _mm256_loadu_pd(query + d)));
    b = _mm256_add_pd(b, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), _mm256_loadu_pd(query + d + 4)));
  }
  double sum = sum_lanes_avx2(a, b);
  for (; d < n; d++) sum += (double)half_value(row[d]) * query[d];
  return sum;
}
#endif

/* A query's floats as doubles, for the dot products above (malloc'd; NULL when out of memory). */
static double *widen(const float *query, size_t n) {
  double *wide = malloc((n > 0 ? n : 1) * sizeof(double));
  if (wide)
    for (size_t d = 0; d < n; d++) wide[d] = query[d];
  return wide;
}

typedef double (*halves_fn)(const uint16_t *row, const double *query, size_t n);
static halves_fn halves = halves_plain;

typedef double (*estimate_fn)(const int8_t *row, const double *query, size_t n);
static estimate_fn estimate = estimate_plain;

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
    estimate = estimate_avx2;
    if (__builtin_cpu_supports("f16c")) halves = halves_avx2;
    sparse_use_avx2(1);
    kernel = "avx2";
  }
#endif
}

/*
 * scan(codes: Int8Array, total, dimension, query: Int8Array, k, cosine: boolean, slots?: Uint32Array,
 * unordered?: boolean) -> Uint32Array: the best k, best first, or in no order when `unordered`.
 */
static napi_value js_scan(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 6) return fail(env, "ERR_VECTOR_SCAN_ARGS", "scan(codes, total, dimension, query, k, cosine[, slots[, unordered]]) takes 6 to 8 arguments", 0);

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
  bool unordered = false;
  if (argc >= 8) {
    napi_valuetype kind;
    napi_typeof(env, argv[7], &kind);
    if (kind != napi_undefined && napi_get_value_bool(env, argv[7], &unordered) != napi_ok)
      return fail(env, "ERR_VECTOR_SCAN_ARGS", "unordered must be a boolean", 0);
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
  /* room for the k best and as many more: each time it fills, the best k stay (a quickselect) */
  size_t room = k > 0 ? 2 * k + 64 : 0;
  entry *kept = room > 0 ? malloc(room * sizeof(entry)) : NULL;
  if (room > 0 && !kept) return fail(env, "ERR_VECTOR_SCAN_MEMORY", "out of memory", 1);
  size_t n = k > 0 ? scan(codes, dimension, query, list, count, cosine, kept, room, k) : 0;
  if (!unordered) sort_best(kept, n);

  napi_value buffer, result;
  void *out;
  if (napi_create_arraybuffer(env, n * sizeof(uint32_t), &out, &buffer) != napi_ok) {
    free(kept);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) ((uint32_t *)out)[i] = kept[i].slot;
  free(kept);
  napi_create_typedarray(env, napi_uint32_array, n, buffer, 0, &result);
  return result;
}

/* How many slots ahead estimate() asks for a row: its rows are at random places, so the hardware cannot guess them. */
#define ESTIMATE_AHEAD 8

/*
 * estimate(codes: Int8Array, dimension, scales: Float32Array, query: Float32Array, slots: Uint32Array,
 * out: Float64Array): out[i] = the float query's inner product with row slots[i]'s codes, times
 * scales[slots[i]] (see PLAIN_DOT).
 */
static napi_value js_estimate(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 6) return fail(env, "ERR_VECTOR_SCAN_ARGS", "estimate(codes, dimension, scales, query, slots, out) takes 6 arguments", 0);
  void *codes, *scales, *query, *list, *out;
  size_t codes_length, scales_length, query_length, list_length, out_length, dimension;
  if (!typed_array(env, argv[0], napi_int8_array, &codes, &codes_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "codes must be an Int8Array", 0);
  if (!whole_number(env, argv[1], 65536.0, &dimension) || dimension == 0) return fail(env, "ERR_VECTOR_SCAN_ARGS", "dimension must be a whole number from 1 to 65536", 1);
  if (!typed_array(env, argv[2], napi_float32_array, &scales, &scales_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "scales must be a Float32Array", 0);
  if (!typed_array(env, argv[3], napi_float32_array, &query, &query_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "query must be a Float32Array", 0);
  if (!typed_array(env, argv[4], napi_uint32_array, &list, &list_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "slots must be a Uint32Array", 0);
  if (!typed_array(env, argv[5], napi_float64_array, &out, &out_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "out must be a Float64Array", 0);
  if (query_length != dimension) return fail(env, "ERR_VECTOR_SCAN_ARGS", "query must hold dimension values", 1);
  if (out_length < list_length) return fail(env, "ERR_VECTOR_SCAN_ARGS", "out must hold a value for each slot", 1);
  size_t rows = codes_length / dimension < scales_length ? codes_length / dimension : scales_length;
  const uint32_t *slots = list;
  for (size_t i = 0; i < list_length; i++)
    if (slots[i] >= rows) return fail(env, "ERR_VECTOR_SCAN_ARGS", "slots must have codes and a scale", 1);
  double *wide = widen(query, dimension);
  if (!wide) return fail(env, "ERR_VECTOR_SCAN_MEMORY", "out of memory", 1);
  /* (the slots are scattered: each row and scale asked for ESTIMATE_AHEAD slots before it is read; see prefetch_rows) */
  for (size_t i = 0; i < list_length && i < ESTIMATE_AHEAD; i++) prefetch_row((const int8_t *)codes + (size_t)slots[i] * dimension, dimension);
  for (size_t i = 0; i < list_length; i++) {
    size_t slot = slots[i];
    if (i + ESTIMATE_AHEAD < list_length) {
      size_t next = slots[i + ESTIMATE_AHEAD];
      prefetch_row((const int8_t *)codes + next * dimension, dimension);
      prefetch_row((const int8_t *)((const float *)scales + next), sizeof(float));
    }
    ((double *)out)[i] = estimate((const int8_t *)codes + slot * dimension, wide, dimension) * (double)((const float *)scales)[slot];
  }
  free(wide);
  return NULL;
}

/*
 * exact(vectors: (Uint16Array | Float32Array | undefined)[], query: Float32Array, out: Float64Array):
 * out[i] = the query's inner product with vectors[i] (halves or floats), or NaN where vectors[i] is
 * not a vector of the query's length.
 */
static napi_value js_exact(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 3) return fail(env, "ERR_VECTOR_SCAN_ARGS", "exact(vectors, query, out) takes 3 arguments", 0);
  bool is_array;
  uint32_t count;
  void *query, *out;
  size_t dimension, out_length;
  if (napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array) return fail(env, "ERR_VECTOR_SCAN_ARGS", "vectors must be an array", 0);
  napi_get_array_length(env, argv[0], &count);
  if (!typed_array(env, argv[1], napi_float32_array, &query, &dimension)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "query must be a Float32Array", 0);
  if (!typed_array(env, argv[2], napi_float64_array, &out, &out_length)) return fail(env, "ERR_VECTOR_SCAN_ARGS", "out must be a Float64Array", 0);
  if (out_length < count) return fail(env, "ERR_VECTOR_SCAN_ARGS", "out must hold a value for each vector", 1);
  double *wide = widen(query, dimension);
  if (!wide) return fail(env, "ERR_VECTOR_SCAN_MEMORY", "out of memory", 1);
  for (uint32_t i = 0; i < count; i++) {
    napi_value element;
    bool is_typed = false;
    double value = NAN;
    if (napi_get_element(env, argv[0], i, &element) == napi_ok && napi_is_typedarray(env, element, &is_typed) == napi_ok && is_typed) {
      napi_typedarray_type type;
      size_t length;
      void *data;
      napi_get_typedarray_info(env, element, &type, &length, &data, NULL, NULL);
      if (length == dimension && type == napi_uint16_array) value = halves((const uint16_t *)data, wide, dimension);
      else if (length == dimension && type == napi_float32_array) value = floats_dot((const float *)data, wide, dimension);
    }
    ((double *)out)[i] = value;
  }
  free(wide);
  return NULL;
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
      estimate = estimate_plain;
      halves = halves_plain;
      sparse_use_avx2(0);
      kernel = "plain";
    } else {
#ifdef VECTOR_SCAN_X86
      if (strcmp(name, "avx2") != 0 || !__builtin_cpu_supports("avx2"))
        return fail(env, "ERR_VECTOR_SCAN_ARGS", "no such kernel on this CPU", 1);
      scan = scan_avx2;
      estimate = estimate_avx2;
      halves = __builtin_cpu_supports("f16c") ? halves_avx2 : halves_plain;
      sparse_use_avx2(1);
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
      {"estimate", NULL, js_estimate, NULL, NULL, NULL, napi_enumerable, NULL},
      {"exact", NULL, js_exact, NULL, NULL, NULL, napi_enumerable, NULL},
      {"kernel", NULL, js_kernel, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sparse", NULL, js_sparse, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}
