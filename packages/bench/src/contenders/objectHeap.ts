import { MapScheduler } from "../baselines/ObjectHeap.ts"
import type { Job, VirtualContender, VirtualInstance, Workload } from "./virtual.ts"

/** (b) The typical hand-written scheduler: a binary heap of entry objects plus a Map id → entry. */
export const objectHeap: VirtualContender = {
  key: "object-heap",
  name: "object heap + Map",
  create: (): VirtualInstance => {
    const s = new MapScheduler<Job>()
    let ids: Array<number> | undefined
    return {
      schedule: (w: Workload, o) => {
        const { delays, job } = w
        const kept: Array<number> | undefined = o.keepHandles ? [] : undefined
        for (let k = 0; k < w.n; k++) {
          const id = s.schedule(delays[k] as number, job)
          kept?.push(id)
        }
        ids = kept
        return { done: w.n }
      },
      run: (w: Workload) => ({ done: s.runUntil(w.end) }),
      cancel: (positions) => {
        const kept = ids
        if (kept === undefined) throw new Error("scheduled without keepHandles")
        let n = 0
        for (let k = 0; k < positions.length; k++) {
          if (s.cancel(kept[positions[k] as number] as number)) n++
        }
        return n
      },
      dropHandles: () => {
        ids = undefined
      },
      figures: () => ({ heapEntries: s.heap.size, deadEntries: s.heap.size - s.byId.size }),
    }
  },
}
