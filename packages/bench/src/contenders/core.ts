import { Clock, Driver, Kernel, Schedule, Task } from "@tickwork/core"
import type { Job, VirtualContender, VirtualInstance, Workload } from "./virtual.ts"

/** (e) The tickwork core: `Driver.scheduleUnsafe` per task, then `Driver.runUntil` on a ManualClock. */
export const coreDriver: VirtualContender = {
  key: "core",
  name: "tickwork core Driver",
  create: (): VirtualInstance => {
    const d = Driver.make({ clock: new Clock.ManualClock(0) })
    let ids: Array<string> | undefined
    return {
      schedule: (w: Workload, o) => {
        const { delays, job } = w
        const kept: Array<string> | undefined = o.keepHandles ? [] : undefined
        for (let k = 0; k < w.n; k++) {
          const id = d.scheduleUnsafe({ schedule: Schedule.once(delays[k] as number), job })
          kept?.push(id)
        }
        ids = kept
        return { done: w.n }
      },
      run: (w: Workload) => ({ done: d.runUntil(w.end) }),
      cancel: (positions) => {
        const kept = ids
        if (kept === undefined) throw new Error("scheduled without keepHandles")
        let n = 0
        for (let k = 0; k < positions.length; k++) {
          if (d.cancel(kept[positions[k] as number] as string)) n++
        }
        return n
      },
      dropHandles: () => {
        ids = undefined
      },
      figures: () => {
        const s = d.stats()
        return { scheduled: s.scheduled, heapEntries: s.heapEntries, deadEntries: s.deadEntries }
      },
    }
  },
}

/**
 * The tickwork kernel without the driver: `Kernel.schedule`, then a `takeDue` / `complete`
 * loop, as the Effect runtime's timing actor uses it. Shows what the driver adds.
 */
export const coreKernel: VirtualContender = {
  key: "kernel",
  name: "tickwork core Kernel loop",
  create: (): VirtualInstance => {
    const kernel = new Kernel.Kernel<Job>()
    let now = 0
    let ids: Array<string> | undefined
    return {
      schedule: (w: Workload, o) => {
        const { delays, job } = w
        const kept: Array<string> | undefined = o.keepHandles ? [] : undefined
        for (let k = 0; k < w.n; k++) {
          const id = kernel.schedule({ schedule: Schedule.once(delays[k] as number), job }, now)
          if (typeof id !== "string") throw id
          kept?.push(id)
        }
        ids = kept
        return { done: w.n }
      },
      run: (w: Workload) => {
        let n = 0
        for (;;) {
          const run = kernel.takeDue(now, w.end)
          if (run === undefined) break
          now = run.startedAt
          run.job()
          kernel.complete(run, Task.succeeded, now, false)
          n++
        }
        now = w.end
        return { done: n }
      },
      cancel: (positions) => {
        const kept = ids
        if (kept === undefined) throw new Error("scheduled without keepHandles")
        let n = 0
        for (let k = 0; k < positions.length; k++) {
          if (kernel.cancel(kept[positions[k] as number] as string, now)) n++
        }
        return n
      },
      dropHandles: () => {
        ids = undefined
      },
      figures: () => {
        const s = kernel.stats()
        return {
          scheduled: s.scheduled,
          heapEntries: s.heapEntries,
          deadEntries: s.deadEntries,
          arrayBytes: kernel.arrayBytes,
        }
      },
    }
  },
}
