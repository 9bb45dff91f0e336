import { Clock, Driver, Kernel, Schedule, Task } from "@tickwork/core"
import { epochNow } from "../lib/env.ts"
import type { RealtimeContender } from "./realtime.ts"
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

/**
 * The core on the real clock, without Effect: a `Driver` on the system clock, every task armed
 * with `Schedule.at(slot)`, and one `setTimeout` for its next slot that runs everything due
 * (`runDue`) — the single-timer limit's loop with the kernel's rules in it. It separates what the
 * core costs on the real clock from what the Effect runtime adds per run (a fiber, its scope and
 * context, the ledger, metrics).
 */
export const coreTimer: RealtimeContender = {
  key: "core-timer",
  name: "tickwork core Driver + one setTimeout",
  start: (slots, started) => {
    const d = Driver.make({ clock: Clock.system })
    const job = (run: Task.RunInfo): void => started(taskOfRow[rowOf(run.id)] as number)
    const taskOfRow = new Int32Array(slots.length)
    for (let k = 0; k < slots.length; k++) {
      taskOfRow[rowOf(d.scheduleUnsafe({ schedule: Schedule.at(slots[k] as number), job }))] = k
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const tick = (): void => {
      timer = undefined
      for (;;) {
        d.runDue()
        const next = d.nextSlot()
        if (next === undefined) return
        const wait = next - epochNow()
        if (wait > 0) {
          timer = setTimeout(tick, Math.ceil(wait))
          return
        }
      }
    }
    const first = d.nextSlot()
    if (first !== undefined) timer = setTimeout(tick, Math.ceil(Math.max(0, first - epochNow())))
    return {
      stop: () => {
        if (timer !== undefined) clearTimeout(timer)
      },
    }
  },
}

/** A generated id's table row (`#<row>.<generation>`): a fresh driver gives task k row k. */
const rowOf = (id: string): number => Number.parseInt(id.slice(1), 10)
