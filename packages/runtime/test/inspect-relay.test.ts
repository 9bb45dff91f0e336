// End to end with @statelyai/inspect: the scheduler's `inspect` feeds its WebSocket inspector,
// which talks to the package's own relay server on loopback; a second WebSocket client (where
// the Stately inspector UI would be) must receive the actors, events and snapshots of a task,
// with the machine's definition. Live time and real sockets, so everything is closed at the end.
import { createServer } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { createWebSocketInspector } from "@statelyai/inspect"
import { createInspectorServer } from "@statelyai/inspect/server"
import { Effect } from "effect"
import { WebSocket } from "ws"
import { Lifecycle, Schedule, Scheduler } from "../src/index.ts"

/** A port nobody listens on right now, on loopback. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Opens a WebSocket client, retrying until the relay listens (it gives no ready signal). */
const connect = async (url: string, deadline = Date.now() + 5_000): Promise<WebSocket> => {
  for (;;) {
    const ws = new WebSocket(url)
    const opened = await new Promise<boolean>((resolve) => {
      ws.once("open", () => resolve(true))
      ws.once("error", () => resolve(false))
    })
    if (opened) return ws
    if (Date.now() > deadline) throw new Error(`no relay at ${url}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const closed = (ws: WebSocket) =>
  new Promise<void>((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) resolve()
    else ws.once("close", () => resolve())
  })

interface Message {
  readonly type: string
  readonly sessionId: string
  readonly rootId?: string
  readonly parentId?: string
  readonly name?: string
  readonly definition?: string
  readonly sourceId?: string
  readonly event?: { readonly type: string; readonly nextSlot?: number }
  readonly snapshot?: {
    readonly value?: string
    readonly status?: string
    readonly context?: unknown
  }
}

describe("@statelyai/inspect relay", () => {
  it("broadcasts a task's actor, events and snapshots, with the machine's definition", async () => {
    const port = await freePort()
    const url = `ws://127.0.0.1:${port}`
    const relay = createInspectorServer({ port, autoOpen: false })
    const viewer = await connect(url)
    const received: Array<Message> = []
    viewer.on("message", (data) => received.push(JSON.parse(String(data)) as Message))
    const inspector = createWebSocketInspector({ url })
    try {
      let runs = 0
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const scheduler = yield* Scheduler.make({ inspect: inspector.inspect })
            yield* scheduler.schedule({
              id: "flaky",
              schedule: Schedule.once(0),
              retry: { maxRetries: 1, base: 5 },
              job: Effect.suspend(() => (++runs === 1 ? Effect.fail("boom") : Effect.void)),
            })
            // The inspector converts on a timer and sends once connected: wait for the last snapshot.
            const deadline = Date.now() + 5_000
            while (
              !received.some((m) => m.type === "@xstate.snapshot" && m.snapshot?.value === "done")
            ) {
              if (Date.now() > deadline) throw new Error("the relay never sent the final snapshot")
              yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
            }
          }),
        ),
      )
    } finally {
      // Close the inspector's socket before the relay: with no relay to talk to, it would retry
      // every 5 s forever and keep the process alive.
      const socket = (inspector.adapter as unknown as { ws?: WebSocket }).ws
      inspector.stop()
      viewer.close()
      await Promise.all([closed(viewer), socket === undefined ? undefined : closed(socket)])
      relay.stop()
    }
    // Nothing is left listening on the port.
    await new Promise<void>((resolve, reject) => {
      const probe = createServer().once("error", reject)
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()))
    })

    const actors = received.filter((m) => m.type === "@xstate.actor")
    const timing = actors.find((m) => m.name === "timing")
    const task = actors.find((m) => m.name === "flaky")
    expect(timing?.parentId).toBeUndefined()
    expect(task?.parentId).toBe(timing?.sessionId)
    expect(task?.rootId).toBe(timing?.sessionId)
    // The definition the Stately inspector draws: the task machine's own config.
    const definition = JSON.parse(task?.definition ?? "{}") as {
      id: string
      initial: string
      states: Record<string, { on?: Record<string, unknown> }>
    }
    expect(definition.id).toBe(Lifecycle.machine.id)
    expect(definition.initial).toBe("scheduled")
    expect(Object.keys(definition.states).sort()).toEqual(
      ["cancelled", "done", "failed", "paused", "running", "scheduled"].sort(),
    )
    expect(Object.keys(definition.states.running?.on ?? {}).sort()).toEqual([
      "CANCEL",
      "FAIL",
      "HAND_BACK",
      "MANUAL_END",
      "PAUSE",
      "RESUME",
      "SUCCEED",
      "UNREADABLE",
    ])

    const ofTask = received.filter((m) => m.sessionId === task?.sessionId)
    expect(
      ofTask
        .filter((m) => m.type === "@xstate.event")
        .map((m) => [m.event?.type, m.sourceId === timing?.sessionId]),
    ).toEqual([
      ["xstate.init", true],
      ["START", true],
      ["FAIL", true],
      ["START", true],
      ["SUCCEED", true],
    ])
    expect(
      ofTask
        .filter((m) => m.type === "@xstate.snapshot")
        .map((m) => `${m.event?.type} -> ${m.snapshot?.value} (${m.snapshot?.status})`),
    ).toEqual([
      "xstate.init -> scheduled (active)",
      "START -> running (active)",
      "FAIL -> scheduled (active)",
      "START -> running (active)",
      "SUCCEED -> done (done)",
    ])
    // A final task's context keeps the attempt that ran last (SPEC §6.9): the retry, attempt 2.
    expect(ofTask.at(-1)?.snapshot?.context).toEqual({
      attempt: 2,
      maxRetries: 1,
      runNumber: 2,
      consecutiveFailures: 0,
      pauseAfter: 0,
      pauseRequested: false,
    })
  })
})
