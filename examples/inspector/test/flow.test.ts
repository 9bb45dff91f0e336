// What the live view's server sends about flow control (SPEC §20): a waiting task's wait
// (cause, scope, since, until) and its group, a task's deduplication key, and the waiting and
// dedup counts of `stats`, both in the snapshot a page gets when it connects and as live
// updates. In process: a real scheduler on the real clock, whose waits are set up so they last
// (a run that never ends holds its group; a rate window of a minute), read by the view's
// `watch`, and each fact waited for with a generous bound rather than a fixed sleep.
import { Schedule, Scheduler } from "@tickwork/runtime"
import { Effect, Exit, Scope, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { WebSocket } from "ws"
import * as LiveView from "../src/liveView.ts"

/** How long a fact may take to show on CI's busy 2-core box. */
const BOUND_MS = 30_000

interface Message {
  readonly t: string
  readonly [field: string]: unknown
}

interface WaitView {
  readonly cause: string
  readonly scope: string
  readonly since: number
  readonly until?: number
}

interface TaskView {
  readonly id: string
  readonly value: string
  readonly flow: {
    readonly group?: string
    readonly key?: string
    readonly dedup?: { readonly key: string; readonly mode: string }
    readonly waiting?: WaitView
  }
}

/** The first frame a new connection gets: the whole picture. */
const snapshot = (port: number): Promise<Message> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`)
    ws.once("message", (data) => {
      ws.close()
      resolve(JSON.parse(String(data)) as Message)
    })
    ws.once("error", reject)
  })

/** Reads snapshots until `check` finds what it needs (returns it), or fails after the bound. */
const snapshotUntil = async <A>(port: number, check: (m: Message) => A | undefined): Promise<A> => {
  const deadline = Date.now() + BOUND_MS
  let last: Message | undefined
  while (Date.now() < deadline) {
    last = await snapshot(port)
    const found = check(last)
    if (found !== undefined) return found
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`not seen within ${BOUND_MS} ms; last snapshot:\n${JSON.stringify(last)}`)
}

const taskIn = (m: Message, id: string) =>
  (m.tasks as ReadonlyArray<TaskView>).find((t) => t.id === id)

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("the live view's flow-control data", () => {
  it("sends a waiting task's wait, its group, a dedup key and the counts by cause", async () => {
    const startedAt = Date.now()
    const view = await Effect.runPromise(
      Effect.gen(function* () {
        const view = yield* LiveView.make({ port: 0 })
        const scheduler = yield* Scheduler.make({
          workers: 4,
          shutdown: "interrupt",
          inspect: view.inspect,
          listener: view.listener,
          limits: {
            groups: { one: { concurrency: 1 }, slow: { rate: { max: 1, per: 60_000 } } },
          },
        })
        yield* Effect.forkScoped(
          Stream.runForEach(scheduler.occurrences, (o) => Effect.sync(() => view.occurrence(o))),
        )
        yield* Effect.forkScoped(view.watch(scheduler))
        // "holder" runs first and never ends, so "queued" waits on the group's concurrency.
        yield* scheduler.schedule({
          id: "holder",
          schedule: Schedule.once(0),
          group: "one",
          job: Effect.never,
        })
        yield* scheduler.schedule({
          id: "queued",
          schedule: Schedule.once(50),
          group: "one",
          job: Effect.void,
        })
        // One start a minute: "rated" waits for the window "first" opened.
        yield* scheduler.schedule({
          id: "first",
          schedule: Schedule.once(0),
          group: "slow",
          job: Effect.void,
        })
        yield* scheduler.schedule({
          id: "rated",
          schedule: Schedule.once(50),
          group: "slow",
          job: Effect.void,
        })
        // A singleton under a dedup key, asked for twice: the second request is deduplicated.
        const unique = {
          id: "unique",
          schedule: Schedule.once(600_000),
          dedup: { key: "search-index" },
          job: Effect.void,
        }
        yield* scheduler.schedule(unique)
        yield* scheduler.schedule(unique)
        return view
      }).pipe(Scope.provide(scope)),
    )
    const port = Number(new URL(view.url).port)

    // A page connected from the start hears the waits as they are found.
    const live: Array<Message> = []
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`)
    ws.on("message", (data) => live.push(JSON.parse(String(data)) as Message))

    const found = await snapshotUntil(port, (m) => {
      const queued = taskIn(m, "queued")
      const rated = taskIn(m, "rated")
      // Optional all the way: a server that sends no flow facts fails by the bound, not a throw.
      const flow = m.flow as { waiting?: Record<string, number> } | undefined
      return queued?.flow?.waiting !== undefined &&
        rated?.flow?.waiting !== undefined &&
        flow?.waiting?.concurrency === 1 &&
        flow.waiting["rate-limited"] === 1
        ? { m, queued, rated }
        : undefined
    })
    const { m, queued, rated } = found

    expect(queued.value).toBe("scheduled")
    expect(queued.flow.group).toBe("one")
    expect(queued.flow.waiting).toMatchObject({ cause: "concurrency", scope: "group:one" })
    expect(queued.flow.waiting?.until).toBeUndefined()
    expect(rated.flow.waiting).toMatchObject({ cause: "rate-limited", scope: "group:slow" })
    // since: when it started waiting (after it was due); until: when the minute's window opens.
    const waitedSince = rated.flow.waiting?.since ?? 0
    expect(waitedSince).toBeGreaterThanOrEqual(startedAt)
    expect(rated.flow.waiting?.until).toBeGreaterThan(waitedSince)
    expect(rated.flow.waiting?.until).toBeLessThanOrEqual(Date.now() + 60_000)
    // The running holder and the task that ran are not waiting.
    expect(taskIn(m, "holder")?.flow.waiting).toBeUndefined()
    expect(taskIn(m, "holder")?.flow.group).toBe("one")
    expect(taskIn(m, "first")?.flow.waiting).toBeUndefined()
    // The dedup key, and the counts of stats().dedup.
    expect(taskIn(m, "unique")?.flow.dedup).toMatchObject({
      key: "search-index",
      mode: "singleton",
    })
    expect(m.flow).toEqual({
      waiting: { concurrency: 1, "rate-limited": 1 },
      dedup: { keys: 1, deduplicated: 1, replaced: 0 },
    })

    // The live connection got the same facts as updates.
    const deadline = Date.now() + BOUND_MS
    const liveWait = () =>
      live.some(
        (x) =>
          x.t === "task" &&
          (x.task as TaskView).id === "queued" &&
          (x.task as TaskView).flow.waiting?.cause === "concurrency",
      ) &&
      live.some(
        (x) =>
          x.t === "flow" &&
          (x.flow as { waiting: Record<string, number> }).waiting.concurrency === 1,
      )
    while (!liveWait() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    ws.close()
    expect(liveWait()).toBe(true)
  }, 90_000)
})
