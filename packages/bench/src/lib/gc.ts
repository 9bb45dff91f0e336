/**
 * What a stretch of work costs the garbage collector, from V8's `GCProfiler` (Node >= 18.15):
 * the share of wall time spent in collections, and the bytes allocated — the growth of the used
 * heap between collections, summed (what each collection found, plus what is left at the end).
 * Allocation in array buffers (typed arrays) is outside the JS heap and not counted.
 */
import { GCProfiler, getHeapStatistics } from "node:v8"

export interface GcReading {
  /** Milliseconds spent in collections. */
  readonly gcMs: number
  /** `gcMs` over the wall time of the stretch, 0–1. */
  readonly gcShare: number
  /** Bytes allocated on the JS heap during the stretch. */
  readonly allocatedBytes: number
  /** Collections, all kinds. */
  readonly collections: number
}

/** A running GC reading; `stop` ends it. One at a time per process. */
export const startGcReading = (): { stop: () => GcReading } => {
  const profiler = new GCProfiler()
  const startUsed = getHeapStatistics().used_heap_size
  const t0 = performance.now()
  profiler.start()
  return {
    stop: () => {
      const result = profiler.stop()
      const wallMs = performance.now() - t0
      const endUsed = getHeapStatistics().used_heap_size
      let allocated = 0
      let lastUsed = startUsed
      let costUs = 0
      for (const s of result?.statistics ?? []) {
        allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - lastUsed)
        lastUsed = s.afterGC.heapStatistics.usedHeapSize
        costUs += s.cost
      }
      allocated += Math.max(0, endUsed - lastUsed)
      const gcMs = costUs / 1000
      return {
        gcMs,
        gcShare: wallMs > 0 ? gcMs / wallMs : 0,
        allocatedBytes: allocated,
        collections: result?.statistics.length ?? 0,
      }
    },
  }
}
