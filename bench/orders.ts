/**
 * The orders the interleaved benchmarks (mapper, mapper-ab, scale-mapper)
 * run their sides in, chunk by chunk. A side that runs right after another
 * meets the same lines in the CPU's caches and its code's neighbours in the
 * instruction cache, so a plain rotation (each side after the same one two
 * chunks in three, with three sides) favours some side by a percent or two
 * (measured: two copies of one tree 0.988); cycling every order favours none.
 *
 * A stream made of repetitions of the same lines is cut into the same chunks
 * every repetition, so its orders must cycle per chunk position
 * (`repetitionOrder`), not over a counter of chunks: with three chunks a
 * repetition and six orders, a counter gives each position two orders only,
 * both with the same side first (scale-mapper's first chunk ran decode + map
 * first every time and the floor never: +0.1x on its ratio).
 */

/** Every order of the sides 0 … n-1. */
export const permutations = (n: number): number[][] => {
  if (n <= 1) return [[0]]
  return permutations(n - 1).flatMap((order) =>
    Array.from({ length: n }, (_, at) => [...order.slice(0, at), n - 1, ...order.slice(at)]),
  )
}

/** The order for chunk `chunk` of repetition `rep`: over `orders.length` repetitions each position meets every order once. */
export const repetitionOrder = (orders: ReadonlyArray<number[]>, rep: number, chunk: number): number[] =>
  orders[(rep + chunk) % orders.length] as number[]
