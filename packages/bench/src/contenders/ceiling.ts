import { TypedHeap } from "../baselines/TypedHeap.ts"
import type { Job, VirtualContender, VirtualInstance, Workload } from "./virtual.ts"

/**
 * (a) The ceiling: the bare typed-array 4-ary heap plus a jobs array indexed by task. Cancelling
 * sets a flag per task; flagged entries are skipped when they surface.
 */
export const ceiling: VirtualContender = {
  key: "ceiling",
  name: "typed-array 4-ary heap (ceiling)",
  ceiling: true,
  create: (): VirtualInstance => {
    const heap = new TypedHeap()
    let jobs: Array<Job | undefined> = []
    let cancelled: Uint8Array | undefined
    let dead = 0
    let now = 0
    let seq = 0
    return {
      schedule: (w: Workload) => {
        const { delays, job } = w
        for (let k = 0; k < w.n; k++) {
          const task = jobs.length
          jobs.push(job)
          heap.push(now + (delays[k] as number), seq++, task)
        }
        return { done: w.n }
      },
      run: (w: Workload) => {
        const end = w.end
        const flags = cancelled
        let n = 0
        while (heap.size > 0) {
          const slot = heap.topSlot()
          if (slot > end) break
          const task = heap.topTask()
          heap.pop()
          if (flags !== undefined && flags[task] === 1) {
            dead--
            continue
          }
          const job = jobs[task] as Job
          jobs[task] = undefined
          now = slot
          job()
          n++
        }
        now = end
        jobs = []
        return { done: n }
      },
      cancel: (positions) => {
        const flags = cancelled ?? new Uint8Array(jobs.length)
        cancelled = flags
        let n = 0
        for (let k = 0; k < positions.length; k++) {
          const task = positions[k] as number
          if (flags[task] === 1) continue
          flags[task] = 1
          jobs[task] = undefined
          dead++
          n++
        }
        return n
      },
      figures: () => ({ heapEntries: heap.size, deadEntries: dead, arrayBytes: heap.byteLength }),
    }
  },
}
