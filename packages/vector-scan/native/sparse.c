/*
 * The sparse side of the embedded index's search: BM25 top k over a project's postings by MaxScore,
 * a term at a time. The terms come highest upper bound first, each adding its contributions to
 * per-slot sums; once the bounds of the terms left sum below the k-th best sum so far, no chunk
 * those terms alone hold can reach the top k, so their (long, low-idf) posting lists add no more
 * chunks: they only add to the sums of the chunks that can still get in, walked whole against those
 * sums while such chunks are many, then looked up by galloping for the few left. Which chunks can
 * still get in is judged against the final scores of the k best so far, completed first.
 *
 * Every sum is the same double arithmetic, in the same order, as the indexer's reference that
 * scores every posting (memory.ts, searchSparseExhaustive), so the scores are equal to the last bit.
 * Ties are left to the caller: it gets every chunk scoring at least the k-th score (more than k
 * when several tie there) and orders equal scores by its own key (memo, then chunk).
 */
#include "args.h"
#include <stdint.h>
#include <stdlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SPARSE_X86 1
#endif

typedef struct {
  const int32_t *slots;
  const uint16_t *tfs;
  size_t n;
  double weight;
  /* The most the term adds to any chunk's score. */
  double bound;
} term;

/*
 * Offers v to a min-heap of at most k values in heap[0..*size): the lowest at the root, so once it
 * holds k, heap[0] is the k-th largest offered. With `slots`, each value's slot moves beside it there.
 */
static inline void heap_offer(double *heap, int32_t *slots, size_t *size, size_t k, double v, int32_t slot) {
  size_t c;
  if (*size < k) {
    c = (*size)++;
    while (c > 0 && heap[(c - 1) / 2] > v) {
      heap[c] = heap[(c - 1) / 2];
      if (slots) slots[c] = slots[(c - 1) / 2];
      c = (c - 1) / 2;
    }
  } else {
    if (v <= heap[0]) return;
    c = 0;
    for (;;) {
      size_t l = 2 * c + 1;
      if (l >= k) break;
      size_t m = l + 1 < k && heap[l + 1] < heap[l] ? l + 1 : l;
      if (heap[m] >= v) break;
      heap[c] = heap[m];
      if (slots) slots[c] = slots[m];
      c = m;
    }
  }
  heap[c] = v;
  if (slots) slots[c] = slot;
}

/*
 * The k-th largest of sums[slots[0..count)] (count >= k >= 1), by a heap of k in `heap`; with `best`,
 * the k slots whose sums are the largest are left there (in no order).
 */
static double kth_largest(const double *sums, const int32_t *slots, size_t count, size_t k, double *heap, int32_t *best) {
  size_t size = 0;
  for (size_t i = 0; i < count; i++) heap_offer(heap, best, &size, k, sums[slots[i]], slots[i]);
  return heap[0];
}

/*
 * The k-th largest sum, with the k slots holding the largest left in `best`, found by reading every
 * slot's sum in order from slot `from` to `to` instead of the touched chunks' in their (random) order:
 * sums of at least `at_least` are offered to the heap. Returns -infinity when fewer than k are.
 */
static double kth_swept_plain(const double *sums, size_t from, size_t to, double at_least, size_t k, double *heap, int32_t *best, size_t *size) {
  for (size_t i = from; i < to; i++)
    if (sums[i] >= at_least) heap_offer(heap, best, size, k, sums[i], (int32_t)i);
  return *size >= k ? heap[0] : -INFINITY;
}

#ifdef SPARSE_X86
/* Eight sums a step, compared at once; a step with none at the floor (nearly all, once the floor is high) costs a compare and a branch. */
__attribute__((target("avx2"))) static double kth_swept_avx2(const double *sums, size_t from, size_t to, double at_least, size_t k, double *heap, int32_t *best, size_t *size) {
  __m256d at = _mm256_set1_pd(at_least);
  size_t i = from;
  for (; i + 8 <= to; i += 8) {
    unsigned bits = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(sums + i), at, _CMP_GE_OQ)) |
                    (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(sums + i + 4), at, _CMP_GE_OQ)) << 4;
    while (bits) {
      size_t slot = i + (size_t)__builtin_ctz(bits);
      heap_offer(heap, best, size, k, sums[slot], (int32_t)slot);
      bits &= bits - 1;
    }
  }
  return kth_swept_plain(sums, i, to, at_least, k, heap, best, size);
}
#endif

typedef double (*kth_swept_fn)(const double *, size_t, size_t, double, size_t, double *, int32_t *, size_t *);
/* Plain until scan.c's kernel choice says otherwise (choose_kernel at load, js_kernel on a switch). */
static kth_swept_fn kth_swept = kth_swept_plain;

void sparse_use_avx2(int on) {
#ifdef SPARSE_X86
  kth_swept = on ? kth_swept_avx2 : kth_swept_plain;
#else
  (void)on;
#endif
}

/* A sweep reads all `capacity` sums: it is taken over the touched chunks' while they are at least 1/SWEEP_RATIO of the slots. */
#define SWEEP_RATIO 16
/* The sweep's floor is the k-th best of the first FLOOR_SAMPLE × k chunks touched. */
#define FLOOR_SAMPLE 8

/*
 * The k-th largest of the sums of the (distinct) chunks in touched[0..count) (count >= k >= 1), and
 * their k slots with the largest sums in `best` (in no order), as kth_largest, but by a sweep of all
 * the sums while the chunks are many beside the slots: a sum is zero until touched, and the k-th best
 * of some of the chunks' sums is a floor no sum of the k best is below.
 */
static double kth_of_touched(const double *sums, const int32_t *touched, size_t count, size_t capacity, size_t k, double *heap, int32_t *best) {
  if (count * SWEEP_RATIO >= capacity && count > FLOOR_SAMPLE * k) {
    double at_least = kth_largest(sums, touched, FLOOR_SAMPLE * k, k, heap, best);
    size_t size = 0;
    /* (a floor of zero would let every untouched slot in; fewer than k at the floor: not k different chunks) */
    double kth = at_least > 0 ? kth_swept(sums, 0, capacity, at_least, k, heap, best, &size) : -INFINITY;
    if (kth > -INFINITY) return kth;
  }
  return kth_largest(sums, touched, count, k, heap, best);
}

/*
 * The first position >= from in slots[0..n) holding a slot >= target: the next 16 slots compared four
 * at a time (most targets are a few postings on), then galloping and a binary search.
 */
static size_t advance(const int32_t *slots, size_t n, size_t from, int32_t target) {
  if (from >= n || slots[from] >= target) return from;
#ifdef SPARSE_X86
  if (from + 16 <= n) {
    __m128i at = _mm_set1_epi32(target);
    for (size_t i = from; i < from + 16; i += 4) {
      /* (the slots ascend: those below the target are the first lanes) */
      int below = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(at, _mm_loadu_si128((const __m128i *)(slots + i)))));
      if (below != 15) return i + (size_t)__builtin_ctz((unsigned)~below);
    }
    from += 15;
  }
#endif
  size_t step = 1, lo = from, hi = from + 1;
  while (hi < n && slots[hi] < target) {
    lo = hi;
    step *= 2;
    hi = hi + step < n ? hi + step : n;
  }
  size_t l = lo + 1, h = hi < n ? hi : n;
  while (l < h) {
    size_t mid = l + (h - l) / 2;
    if (slots[mid] < target) l = mid + 1;
    else h = mid;
  }
  return l;
}

/* A term left after MaxScore's cut is walked whole while its postings are at most this many times the chunks still in the running. */
#define MERGE_RATIO 8

typedef struct {
  const term *terms;
  size_t count;
  const float *lengths;
  const uint8_t *mask;
  /* Slots at or past this are outside every per-slot array: never findable. */
  size_t capacity;
  double base, per_length;
  size_t k;
  double *sums;
  int32_t *touched;
} sparse_query;

/* What a posting of term p with count tf adds to its slot's score (one expression, as the JS reference sums it). */
static inline double contribution(const sparse_query *q, const term *p, double tf, int32_t slot) {
  return (p->weight * tf) / (tf + q->base + q->per_length * (double)q->lengths[slot]);
}

/* A bound below the threshold, with a margin for rounding: bounds are summed apart from the scores they bound. */
static inline int below(double bound, double threshold) { return bound < threshold - 1e-9 * fabs(threshold); }

/*
 * Keeps, in touched[0..count) and in their order, the chunks whose sums the terms still to come (their
 * bounds summed in `rest`) could lift to the threshold; zeroes the others' sums, and with `bits` (one
 * per slot) clears their bits. Returns how many it kept.
 */
static size_t cut(double *sums, int32_t *touched, size_t count, double rest, double threshold, uint64_t *bits) {
  size_t kept = 0;
  for (size_t i = 0; i < count; i++) {
    int32_t slot = touched[i];
    double sum = sums[slot];
    int keep = !below(sum + rest, threshold);
    /* (without a branch: whether a chunk survives is a coin toss the CPU mispredicts) */
    sums[slot] = keep ? sum : 0;
    if (bits) bits[(uint32_t)slot >> 6] &= ~((uint64_t)!keep << (slot & 63));
    touched[kept] = slot;
    kept += (size_t)keep;
  }
  return kept;
}

static int ascending_slots(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/*
 * A lower bound on the final k-th best score, once the walk has stopped before terms[t]: the k
 * chunks with the best partial sums (`best`, as the walk's last look at the k-th found them; put in
 * ascending order here) are completed by looking each up in terms[t..), and the lowest of their k
 * final scores is returned: any k chunks' final scores bound the k-th best from below. Each adds the
 * terms in the walk's order, as its final sum will, so the bound is exact, not rounded apart.
 *
 * The k-th best partial sum, which the walk stopped at, is lower: at 98,810 chunks (Vaswani's 93
 * queries, top 100) ~11k chunks a query survived the cut with it, each then looked up in the terms
 * left, and ~5k with this bound. -infinity (no bound) should the k not be k different chunks.
 * `scores`: scratch of k.
 */
static double complete_best(const sparse_query *q, size_t t, int32_t *best, double *scores) {
  size_t k = q->k;
  qsort(best, k, sizeof(int32_t), ascending_slots);
  for (size_t i = 0; i < k; i++) {
    if (i > 0 && best[i] == best[i - 1]) return -INFINITY;
    scores[i] = q->sums[best[i]];
  }
  for (size_t u = t; u < q->count; u++) {
    const term *p = &q->terms[u];
    size_t pos = 0;
    for (size_t i = 0; i < k && pos < p->n; i++) {
      pos = advance(p->slots, p->n, pos, best[i]);
      if (pos < p->n && p->slots[pos] == best[i]) scores[i] += contribution(q, p, p->tfs[pos], best[i]);
    }
  }
  double lowest = INFINITY;
  for (size_t i = 0; i < k; i++)
    if (scores[i] < lowest) lowest = scores[i];
  return lowest;
}

/*
 * Runs the query: leaves the surviving chunks in touched[0..*live) with their sums in `sums`, and
 * sets *kth to the k-th best score among them (-infinity when they are k or fewer). `rest`, `heap`
 * and `best_slots` are scratch of count + 1 doubles, k doubles and k slots. Returns 0 when out of
 * memory (the sums of touched[0..*live) still to be cleared).
 */
static int run(const sparse_query *q, size_t *live, double *kth, double *rest, double *heap, int32_t *best_slots) {
  const term *terms = q->terms;
  size_t t_count = q->count, k = q->k;
  double *sums = q->sums;
  int32_t *touched = q->touched;
  /* rest[t]: the summed bounds of terms t.. ; postings_left[t] follows as a running sum. */
  rest[t_count] = 0;
  size_t postings_left = 0;
  for (size_t t = t_count; t-- > 0;) {
    rest[t] = rest[t + 1] + terms[t].bound;
    postings_left += terms[t].n;
  }
  size_t count = 0;
  double best = 0, threshold = -INFINITY;
  size_t t = 0;
  for (; t < t_count; t++) {
    /* Only worth a look once the terms left could not lift an untouched chunk past the best sum, and
       their postings outnumber the sums the look reads (twice: the k-th, then the survivors). */
    if (count >= k && rest[t] < best && postings_left > 2 * count) {
      threshold = kth_of_touched(sums, touched, count, q->capacity, k, heap, best_slots);
      if (below(rest[t], threshold)) break;
    }
    const term *p = &terms[t];
    postings_left -= p->n;
    for (size_t j = 0; j < p->n; j++) {
      int32_t slot = p->slots[j];
      if ((uint32_t)slot >= q->capacity || q->mask[slot] != 1) continue;
      double tf = p->tfs[j];
      double sum = sums[slot];
      /* Appended without a branch (whether a chunk was touched before is a coin toss per posting),
         never past capacity + 1 entries, whatever the postings hold. */
      touched[count] = slot;
      count += (sum == 0) & (count < q->capacity);
      double next = sum + contribution(q, p, tf, slot);
      sums[slot] = next;
      if (next > best) best = next;
    }
  }
  if (t < t_count) {
    /* (the walk stopped right after its look at the k-th: best_slots holds the k best partial sums) */
    double bound = complete_best(q, t, best_slots, heap);
    if (bound > threshold) threshold = bound;
    /* The chunks that can still reach the top k. */
    size_t alive = cut(sums, touched, count, rest[t], threshold, NULL);
    /*
     * The survivors put in ascending order through a bitmap of the slots, one bit each, read back a
     * word at a time, cheaper than sorting them; in that order their sums are read (by each cut, and
     * each look-up below) in the order they lie in memory. The bitmap stays: it says which chunks survive.
     */
    size_t words = (q->capacity + 63) / 64;
    uint64_t *bits = calloc(words > 0 ? words : 1, sizeof(uint64_t));
    size_t *cursor = calloc(t_count > t ? t_count - t : 1, sizeof(size_t));
    if (!bits || !cursor) {
      free(bits);
      free(cursor);
      *live = alive;
      return 0;
    }
    for (size_t i = 0; i < alive; i++) bits[(uint32_t)touched[i] >> 6] |= (uint64_t)1 << (touched[i] & 63);
    size_t o = 0;
    for (size_t w = 0; w < words; w++) {
      uint64_t b = bits[w];
      while (b) {
        touched[o++] = (int32_t)(w * 64 + (size_t)__builtin_ctzll(b));
        b &= b - 1;
      }
    }
    /*
     * While the next term's postings are few beside the survivors, they are walked whole, each adding
     * to its chunk's sum if that chunk survives (its bit is set: a few kilobytes the cache keeps, where
     * the sums take 64 times as much), and the survivors are cut again by the terms after it: a linear
     * pass instead of a look-up per survivor, whose branches the CPU cannot predict. The sums add the
     * terms in the same order either way.
     */
    while (t < t_count && terms[t].n <= MERGE_RATIO * alive) {
      const term *p = &terms[t];
      for (size_t j = 0; j < p->n; j++) {
        int32_t slot = p->slots[j];
        if ((uint32_t)slot >= q->capacity || !(bits[(uint32_t)slot >> 6] >> (slot & 63) & 1)) continue;
        sums[slot] += contribution(q, p, p->tfs[j], slot);
      }
      t++;
      alive = cut(sums, touched, alive, rest[t], threshold, bits);
    }
    free(bits);
    /*
     * A chunk at a time, each looked up in the terms left (a cursor per term: the chunks ascend),
     * and dropped as soon as even the terms after the one just added cannot lift it to the threshold.
     * Each chunk that gets through all of them has its final score, so the threshold rises to the
     * k-th best of those once there are k: a bound on the k-th best overall, as the k-th best of
     * partial sums was.
     */
    size_t kept = 0, done = 0;
    for (size_t i = 0; i < alive; i++) {
      int32_t slot = touched[i];
      double sum = sums[slot];
      size_t u = t;
      for (; u < t_count; u++) {
        const term *p = &terms[u];
        size_t pos = cursor[u - t] = advance(p->slots, p->n, cursor[u - t], slot);
        if (pos < p->n && p->slots[pos] == slot) sum += contribution(q, p, p->tfs[pos], slot);
        if (below(sum + rest[u + 1], threshold)) break;
      }
      if (u < t_count) {
        sums[slot] = 0;
        continue;
      }
      sums[slot] = sum;
      touched[kept++] = slot;
      /* heap: the k best final scores so far */
      heap_offer(heap, NULL, &done, k, sum, slot);
      if (done == k && heap[0] > threshold) threshold = heap[0];
    }
    free(cursor);
    count = kept;
  }
  *live = count;
  *kth = count > k ? kth_of_touched(sums, touched, count, q->capacity, k, heap, NULL) : -INFINITY;
  return 1;
}

/*
 * sparse(slots: Int32Array[], tfs: Uint16Array[], terms: Float64Array (n, weight, bound per term),
 *        lengths: Float32Array, mask: Uint8Array, base, perLength, k, sums: Float64Array, touched: Int32Array)
 *   -> Float64Array of (score, slot) pairs, in no order
 *
 * A term's postings are the first n of its slots (ascending) and tfs. A slot is findable when its
 * mask byte is 1; its length in terms is lengths[slot]. A posting contributes
 * weight * tf / (tf + base + perLength * length). `sums` (zero on the way in, and left so) and
 * `touched` are scratch of as many entries as there are slots, touched one more.
 */
napi_value js_sparse(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *code = "ERR_VECTOR_SCAN_ARGS";
  if (argc < 10) return fail(env, code, "sparse(slots, tfs, terms, lengths, mask, base, perLength, k, sums, touched) takes 10 arguments", 0);

  void *info_data, *lengths, *mask, *sums, *touched;
  size_t info_length, lengths_length, mask_length, sums_length, touched_length, k;
  double base, per_length;
  if (!typed_array(env, argv[2], napi_float64_array, &info_data, &info_length) || info_length % 3 != 0)
    return fail(env, code, "terms must be a Float64Array of (n, weight, bound) triples", 0);
  if (!typed_array(env, argv[3], napi_float32_array, &lengths, &lengths_length)) return fail(env, code, "lengths must be a Float32Array", 0);
  if (!typed_array(env, argv[4], napi_uint8_array, &mask, &mask_length)) return fail(env, code, "mask must be a Uint8Array", 0);
  if (!finite_number(env, argv[5], &base) || !finite_number(env, argv[6], &per_length) || base < 0 || per_length < 0)
    return fail(env, code, "base and perLength must be finite numbers, not negative", 1);
  if (!whole_number(env, argv[7], 4294967295.0, &k) || k == 0) return fail(env, code, "k must be a whole number from 1", 1);
  if (!typed_array(env, argv[8], napi_float64_array, &sums, &sums_length)) return fail(env, code, "sums must be a Float64Array", 0);
  if (!typed_array(env, argv[9], napi_int32_array, &touched, &touched_length)) return fail(env, code, "touched must be an Int32Array", 0);

  size_t t_count = info_length / 3;
  bool is_array;
  uint32_t slots_count = 0, tfs_count = 0;
  if (napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[0], &slots_count) != napi_ok ||
      napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[1], &tfs_count) != napi_ok ||
      slots_count != t_count || tfs_count != t_count)
    return fail(env, code, "slots and tfs must be arrays with one entry per term", 0);

  size_t capacity = lengths_length;
  if (mask_length < capacity) capacity = mask_length;
  if (sums_length < capacity) capacity = sums_length;
  /* (touched takes one entry past the chunks it lists: see the walk in run) */
  if (touched_length < capacity + 1) capacity = touched_length > 0 ? touched_length - 1 : 0;

  /* (no more than there are slots: the heap's scratch is sized by k) */
  if (k > capacity) k = capacity > 0 ? capacity : 1;
  term *terms = malloc((t_count + 1) * sizeof(term));
  double *scratch = malloc((t_count + 1 + k) * sizeof(double));
  int32_t *best_slots = malloc(k * sizeof(int32_t));
  if (!terms || !scratch || !best_slots) {
    free(terms);
    free(scratch);
    free(best_slots);
    return fail(env, "ERR_VECTOR_SCAN_MEMORY", "out of memory", 1);
  }
  const double *triples = info_data;
  for (size_t t = 0; t < t_count; t++) {
    napi_value s, f;
    void *slots, *tfs;
    size_t slots_length, tfs_length;
    const char *problem = NULL;
    int range = 0;
    if (napi_get_element(env, argv[0], (uint32_t)t, &s) != napi_ok || !typed_array(env, s, napi_int32_array, &slots, &slots_length))
      problem = "each term's slots must be an Int32Array";
    else if (napi_get_element(env, argv[1], (uint32_t)t, &f) != napi_ok || !typed_array(env, f, napi_uint16_array, &tfs, &tfs_length))
      problem = "each term's tfs must be a Uint16Array";
    else {
      range = 1;
      double n = triples[3 * t], weight = triples[3 * t + 1], bound = triples[3 * t + 2];
      if (!(n >= 0 && n == floor(n) && n <= (double)slots_length && n <= (double)tfs_length)) problem = "a term's n must be a whole number within its postings";
      else if (!(weight > 0) || !isfinite(weight) || !(bound >= 0) || !isfinite(bound)) problem = "a term's weight must be positive and its bound not negative, both finite";
      else terms[t] = (term){slots, tfs, (size_t)n, weight, bound};
    }
    if (problem) {
      free(terms);
      free(scratch);
      free(best_slots);
      return fail(env, code, problem, range);
    }
  }

  sparse_query q = {terms, t_count, lengths, mask, capacity, base, per_length, k, sums, touched};
  size_t live = 0;
  double kth = -INFINITY;
  int ran = run(&q, &live, &kth, scratch, scratch + t_count + 1, best_slots);
  double *sum_of = sums;
  int32_t *found = touched;
  size_t out_count = 0;
  for (size_t i = 0; ran && i < live; i++) out_count += sum_of[found[i]] >= kth;

  napi_value buffer, result;
  void *out = NULL;
  napi_status status = ran ? napi_create_arraybuffer(env, out_count * 2 * sizeof(double), &out, &buffer) : napi_generic_failure;
  size_t o = 0;
  for (size_t i = 0; i < live; i++) {
    int32_t slot = found[i];
    if (status == napi_ok && sum_of[slot] >= kth) {
      ((double *)out)[o++] = sum_of[slot];
      ((double *)out)[o++] = (double)slot;
    }
    sum_of[slot] = 0; /* (the scratch is zero between queries) */
  }
  free(terms);
  free(scratch);
  free(best_slots);
  if (!ran) return fail(env, "ERR_VECTOR_SCAN_MEMORY", "out of memory", 1);
  if (status != napi_ok) return NULL;
  napi_create_typedarray(env, napi_float64_array, 2 * out_count, buffer, 0, &result);
  return result;
}
