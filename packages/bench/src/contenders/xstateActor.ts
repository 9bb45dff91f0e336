import { type Actor, createActor, setup } from "xstate"
import { TypedHeap } from "../baselines/TypedHeap.ts"
import { heapGuardBytes, heapUsed } from "../lib/env.ts"
import {
  CHECK_MASK,
  type Job,
  type VirtualContender,
  type VirtualInstance,
  type Workload,
} from "./virtual.ts"

/** The smallest task machine: scheduled → running → done. */
const taskMachine = setup({
  types: { events: {} as { type: "start" } | { type: "finish" } },
}).createMachine({
  id: "task",
  initial: "scheduled",
  states: {
    scheduled: { on: { start: "running" } },
    running: { on: { finish: "done" } },
    done: { type: "final" },
  },
})

const START = { type: "start" } as const
const FINISH = { type: "finish" } as const

/**
 * (d) One started XState actor per task (`createActor(machine).start()`), ordered by the
 * ceiling's typed heap; running a task sends `start`, calls the job, sends `finish`. An actor
 * retains kilobytes, so this contender stops at the heap guard or the time budget.
 */
export const xstateActor: VirtualContender = {
  key: "xstate",
  name: "XState actor per task",
  bounded: true,
  create: (): VirtualInstance => {
    const heap = new TypedHeap()
    const actors: Array<Actor<typeof taskMachine> | undefined> = []
    let job: Job | undefined
    let now = 0
    let seq = 0
    let ran = 0
    return {
      schedule: (w: Workload, o) => {
        const delays = w.delays
        job = w.job
        const guard = heapGuardBytes()
        for (let k = 0; k < w.n; k++) {
          const task = actors.length
          actors.push(createActor(taskMachine).start())
          heap.push(now + (delays[k] as number), seq++, task)
          if ((k & CHECK_MASK) === CHECK_MASK) {
            if (performance.now() > o.deadline) return { done: k + 1, cutOff: "time budget" }
            if (heapUsed() > guard) return { done: k + 1, cutOff: "heap guard" }
          }
        }
        return { done: w.n }
      },
      run: (w: Workload, deadline: number) => {
        const run = job as Job
        while (heap.size > 0) {
          const slot = heap.topSlot()
          if (slot > w.end) break
          const task = heap.topTask()
          heap.pop()
          const actor = actors[task] as Actor<typeof taskMachine>
          actors[task] = undefined
          now = slot
          actor.send(START)
          run()
          actor.send(FINISH)
          ran++
          if ((ran & CHECK_MASK) === 0 && performance.now() > deadline) {
            return { done: ran, cutOff: "time budget" }
          }
        }
        now = w.end
        return { done: ran }
      },
      figures: () => ({ scheduled: actors.length, ran }),
      close: () => {
        // Actors left over after a cut-off are not registered anywhere global: dropping them
        // frees them (stopping each would cost microseconds apiece).
        actors.length = 0
      },
    }
  },
}
