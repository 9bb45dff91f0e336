// The live view's server: one loopback HTTP server that serves page.html and, on /ws, a WebSocket
// that streams what the scheduler reports. It is fed three ways:
//   - `inspect`: the scheduler's XState inspection stream (each task's state, context and the
//     event that moved it);
//   - `listener.started`: runs as they start (for the timeline's bars in progress);
//   - `occurrence`: the occurrence ledger's stream (finished runs, retries, skipped and coalesced
//     slots, cancellations, and the control occurrences: pauses, resumes, expired one-shots and
//     circuit-breaker transitions);
//   - `watch(scheduler)`: a poll of the scheduler's queries — each paused task's reason
//     (`TaskInfo.pausedReason`), every circuit breaker (`breakers`), each task's flow control
//     (`TaskInfo.group`, `key`, `dedup` and `waiting`) and the waiting runs by cause (`stats`)
//     — for what the two streams do not carry (failure counts, held tasks, waits).
// It keeps the current state and a bounded history, so a page that connects late (or reloads)
// gets the whole picture first, then live updates.
//
// Only its operator reads it (the rules of `PageAccess`, shared with the CLI's dashboard): every
// request's `Host` must name an address served (else 421, so a DNS-rebinding page learns
// nothing); a WebSocket upgrade carrying a foreign `Origin` is refused (403) before any state is
// sent; and served beyond loopback, or whenever a token is given, the upgrade needs the token in
// its `token` query parameter (else 401/403). The page itself holds no data; it reads the token
// from its URL's `#token=` fragment, which browsers never send to the server.
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import {
  type Inspect,
  type Ledger,
  Lifecycle,
  PageAccess,
  Schedule,
  type Scheduler,
  type Task,
} from "@tickwork/runtime"
import { Effect, type Scope } from "effect"
import { WebSocket, WebSocketServer } from "ws"
import type { InspectionEvent } from "xstate"
import { toDirectedGraph } from "xstate/graph"
import * as Flow from "./flow.ts"

/** The task machine as the page draws it: states and edges, read from its definition. */
export interface MachineGraph {
  readonly id: string
  readonly initial: string
  readonly states: ReadonlyArray<{ readonly key: string; readonly final: boolean }>
  readonly edges: ReadonlyArray<{
    readonly source: string
    readonly target: string
    readonly event: string
    readonly guard: string | undefined
  }>
}

export const machineGraph = (): MachineGraph => {
  const graph = toDirectedGraph(Lifecycle.machine)
  return {
    id: Lifecycle.machine.id,
    initial: String(Lifecycle.machine.config.initial),
    states: graph.children.map((node) => ({
      key: node.stateNode.key,
      final: node.stateNode.type === "final",
    })),
    edges: graph.children.flatMap((node) =>
      node.edges.map((edge) => {
        const guard = edge.transition.guard as string | { type: string } | undefined
        return {
          source: edge.source.key,
          target: edge.target.key,
          event: edge.label.text,
          guard: guard === undefined ? undefined : typeof guard === "string" ? guard : guard.type,
        }
      }),
    ),
  }
}

/** A task as the page shows it: its XState snapshot, and the step that led there. */
interface TaskView {
  readonly id: string
  readonly session: string
  readonly description: string
  /** A cron task's expression in words (core's `Schedule.explain`); `""` for other kinds. */
  words: string
  value: string
  status: string
  context: Lifecycle.TaskContext
  /** The event of the last step, and the state before it. */
  event: string | undefined
  from: string | undefined
  /** When the last step happened, epoch ms. */
  since: number
  /** Why it is `paused` (`TaskInfo.pausedReason`); `undefined` in any other state. */
  pausedReason: Task.PauseReason | undefined
  /** Its group, key, dedup key and wait (SPEC §20), as the last `watch` read found them. */
  flow: Flow.TaskFlow
}

type BreakerInfo = Effect.Success<Scheduler.SchedulerShape["breakers"]>[number]

/** A circuit breaker as the page shows it. */
interface BreakerView {
  readonly name: string
  shared: boolean
  state: Task.BreakerState
  /** Failed slots in a row (counted while closed), and how many open it. */
  failures: number
  threshold: number
  /** The cool-down of its last opening (its policy's until it opens), ms. */
  coolDown: number
  /** Times it opened since it last closed. */
  opens: number
  openedAt: number | undefined
  /** When an open breaker goes half-open, epoch ms. */
  halfOpenAt: number | undefined
  probe: string | undefined
  tasks: ReadonlyArray<string>
  /** Its tasks it holds (`paused`, reason `breaker`). */
  held: ReadonlyArray<string>
  /** When it entered its state, epoch ms, when known. */
  since: number | undefined
}

interface RunView {
  readonly id: string
  readonly scheduledFor: number
  readonly startedAt: number
  readonly attempt: number
  readonly runNumber: number
}

/** One line of the inspection feed. */
interface FeedLine {
  readonly at: number
  readonly id: string
  readonly event: string
  readonly from: string | undefined
  /** `undefined` when the machine ignored the event. */
  readonly to: string | undefined
}

type OccurrenceView =
  | {
      readonly kind: "ran" | "retried"
      readonly id: string
      readonly scheduledFor: number
      readonly startedAt: number
      readonly finishedAt: number
      readonly attempt: number
      readonly runNumber: number
      readonly outcome: Task.Outcome["kind"]
      readonly detail: string | undefined
      readonly state: string
      readonly nextSlot: number | undefined
    }
  | {
      readonly kind: "coalesced" | "skipped"
      readonly id: string
      readonly first: number
      readonly last: number
      readonly count: number
      readonly cause: string
      readonly nextSlot: number | undefined
      readonly at: number
    }
  | {
      readonly kind: "cancelled"
      readonly id: string
      readonly from: string
      readonly scheduledFor: number
      readonly interrupted: boolean
      readonly at: number
    }
  | {
      readonly kind: "updated"
      readonly id: string
      readonly fields: ReadonlyArray<string>
      readonly cause: string
      readonly at: number
    }
  | {
      readonly kind: "expired"
      readonly id: string
      readonly scheduledFor: number
      readonly deadline: number
      readonly at: number
    }
  | {
      readonly kind: "paused"
      readonly id: string
      readonly reason: Task.PauseReason
      readonly at: number
    }
  | {
      readonly kind: "resumed"
      readonly id: string
      /** What had held it. */
      readonly reason: Task.PauseReason
      readonly nextSlot: number
      readonly at: number
    }
  | {
      readonly kind: "breaker"
      /** The breaker's name. */
      readonly id: string
      readonly from: Task.BreakerState
      readonly to: Task.BreakerState
      readonly coolDown: number | undefined
      readonly halfOpenAt: number | undefined
      readonly probe: string | undefined
      readonly cause: string | undefined
      readonly at: number
    }
  | {
      readonly kind: "deduplicated"
      /** The task that holds the key. */
      readonly id: string
      readonly key: string
      readonly result: "deduplicated" | "replaced"
      readonly at: number
    }

const detailOf = (outcome: Task.Outcome): string | undefined => {
  const cause =
    outcome.kind === "failed"
      ? outcome.error
      : outcome.kind === "defect"
        ? outcome.defect
        : outcome.kind === "timed-out"
          ? `no answer after ${outcome.afterMs} ms`
          : undefined
  if (cause === undefined) return undefined
  if (typeof cause === "string") return cause
  if (cause instanceof Error || (typeof cause === "object" && cause !== null && "message" in cause))
    return String((cause as { message: unknown }).message)
  return String(cause)
}

const toView = (o: Ledger.StreamItem): OccurrenceView => {
  switch (o.kind) {
    case "ran":
    case "retried":
      return {
        kind: o.kind,
        id: o.id,
        scheduledFor: o.scheduledFor,
        startedAt: o.startedAt,
        finishedAt: o.finishedAt,
        attempt: o.attempt,
        runNumber: o.runNumber,
        outcome: o.outcome.kind,
        detail: detailOf(o.outcome),
        state: o.state,
        nextSlot: o.nextSlot,
      }
    case "coalesced":
    case "skipped":
      return {
        kind: o.kind,
        id: o.id,
        first: o.first,
        last: o.last,
        count: o.count,
        cause: o.cause,
        nextSlot: o.nextSlot,
        at: o.at,
      }
    case "cancelled":
      return {
        kind: o.kind,
        id: o.id,
        from: o.from,
        scheduledFor: o.scheduledFor,
        interrupted: o.interrupted,
        at: o.at,
      }
    case "updated":
      return { kind: o.kind, id: o.id, fields: o.fields, cause: o.cause, at: o.at }
    case "expired":
      return {
        kind: o.kind,
        id: o.id,
        scheduledFor: o.scheduledFor,
        deadline: o.deadline,
        at: o.at,
      }
    case "paused":
      return { kind: o.kind, id: o.id, reason: o.reason, at: o.at }
    case "resumed":
      return { kind: o.kind, id: o.id, reason: o.reason, nextSlot: o.nextSlot, at: o.at }
    case "breaker":
      return {
        kind: o.kind,
        id: o.breaker,
        from: o.from,
        to: o.to,
        coolDown: o.coolDown,
        halfOpenAt: o.halfOpenAt,
        probe: o.probe,
        cause: o.cause,
        at: o.at,
      }
    case "deduplicated":
      return { kind: o.kind, id: o.id, key: o.key, result: o.result, at: o.at }
  }
}

const breakerView = (info: BreakerInfo, before: BreakerView | undefined): BreakerView => ({
  name: info.name,
  shared: info.shared,
  state: info.state,
  failures: info.failures,
  threshold: info.policy.failures,
  coolDown:
    info.state === "open" && info.openedAt !== undefined && info.halfOpenAt !== undefined
      ? info.halfOpenAt - info.openedAt
      : (before?.coolDown ?? info.policy.coolDown),
  opens: info.opens,
  openedAt: info.openedAt,
  halfOpenAt: info.halfOpenAt,
  probe: info.probe,
  tasks: info.tasks,
  held: info.held,
  since:
    before !== undefined && before.state === info.state
      ? before.since
      : info.state === "open"
        ? info.openedAt
        : undefined,
})

/** History kept for late joiners. */
const KEEP_OCCURRENCES = 4_000
const KEEP_LATENESS = 5_000
const KEEP_FEED = 40
/** How often `watch` reads the scheduler's paused tasks and breakers. */
const WATCH_EVERY_MS = 250

export interface LiveViewOptions {
  /** TCP port; 0 picks a free one. */
  readonly port: number
  /**
   * The address to listen on (default `127.0.0.1`). Beyond loopback the WebSocket needs the
   * token.
   */
  readonly host?: string
  /**
   * The token the WebSocket needs (at least `PageAccess.MIN_TOKEN_LENGTH` printable
   * characters). Default: none on loopback, a random one beyond it.
   */
  readonly token?: string
  /** Try a free port if `port` is taken. */
  readonly fallback?: boolean
  /** A line about each task, shown under its name. */
  readonly descriptions?: Readonly<Record<string, string>>
}

export interface LiveView {
  /** The page's address (without the token). */
  readonly url: string
  /** The token the WebSocket needs; `undefined` when none does. Open `${url}#token=${token}`. */
  readonly token: string | undefined
  /** For `Scheduler.make({ inspect })`. */
  readonly inspect: Inspect.Observer
  /** For `Scheduler.make({ listener })`. */
  readonly listener: Scheduler.Listener
  /**
   * Tells the view the schedule task `id` is given; call it before scheduling the task. A cron
   * schedule's expression is then shown in words under the task's name (core's
   * `Schedule.explain`), so no one writes them by hand; other kinds show nothing more.
   */
  readonly scheduled: (id: string, schedule: Schedule.Schedule) => void
  /** Feed it the scheduler's `occurrences` stream. */
  readonly occurrence: (occurrence: Ledger.StreamItem) => void
  /**
   * Reads the scheduler's paused tasks (their `pausedReason`), its circuit breakers, each task's
   * flow control (group, key, dedup key, wait: SPEC §20) and its waiting and dedup counts every
   * 250 ms, for as long as it runs (fork it in the view's scope). A wait shorter than that may
   * go unseen.
   */
  readonly watch: (scheduler: Scheduler.SchedulerShape) => Effect.Effect<never>
  /** Pages connected right now. */
  readonly clients: () => number
}

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 26 26"><circle cx="13" cy="13" r="11" fill="#0b1020" stroke="#60a5fa" stroke-width="2.4"/><path d="M13 6v7l5 3" fill="none" stroke="#22d3ee" stroke-width="2.4" stroke-linecap="round"/></svg>'

const page = () => readFileSync(new URL("./page.html", import.meta.url), "utf8")

/** The page's headers: only its own inline script runs (by hash), and nothing may frame it. */
const pageHeaders = (html: string) => {
  const script = html.slice(html.indexOf("<script>") + 8, html.indexOf("</script>"))
  const hash = createHash("sha256").update(script, "utf8").digest("base64")
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  }
}

/** Ends a refused upgrade with a plain HTTP answer; no WebSocket frame is ever sent. */
const refuse = (socket: Socket, status: number, reason: string, body: string) => {
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  socket.destroySoon()
}

const listen = (server: Server, port: number, host: string, fallback: boolean): Promise<number> =>
  new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE" && fallback && port !== 0) {
        server.listen(0, host)
      } else {
        reject(error)
      }
    }
    server.on("error", onError)
    server.once("listening", () => {
      server.off("error", onError)
      resolve((server.address() as AddressInfo).port)
    })
    server.listen(port, host)
  })

/** Starts the live view's server in the current scope; closing the scope closes it. */
export const make = (options: LiveViewOptions): Effect.Effect<LiveView, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const startedAt = Date.now()
    const descriptions = options.descriptions ?? {}
    const machine = machineGraph()
    const tasks = new Map<string, TaskView>()
    const running = new Map<string, RunView>()
    const occurrences: Array<OccurrenceView> = []
    const lateness: Array<number> = []
    const feed: Array<FeedLine> = []
    const breakers = new Map<string, BreakerView>()
    /** A cron task's words, by task id, from {@link LiveView.scheduled}. */
    const words = new Map<string, string>()
    let runs = 0
    /** Waiting runs by cause and dedup counts, from the last `watch` read of `stats`. */
    let flow: Flow.FlowCounts = Flow.noCounts

    const host = (options.host ?? "127.0.0.1").replace(/^\[|\]$/g, "")
    const loopback = PageAccess.isLoopback(host)
    if (options.token !== undefined) {
      const checked = PageAccess.checkToken("token", options.token)
      if (typeof checked !== "string") return yield* Effect.fail(checked)
    }
    const token = options.token ?? (loopback ? undefined : PageAccess.newToken())
    // Filled in once the port is known; until then nothing is served.
    let hosts: ReadonlySet<string> = new Set()
    let origins: ReadonlySet<string> = new Set()

    const html = page()
    const headers = pageHeaders(html)
    const server = createServer((req, res) => {
      // First: a page that rebound its own name to this address must learn nothing.
      if (!PageAccess.hostAllowed(hosts, req.headers.host)) {
        res.writeHead(421, { "content-type": "text/plain" })
        res.end(`unknown Host ${JSON.stringify(req.headers.host ?? "")}\n`)
      } else if (req.url === "/" || req.url?.startsWith("/?")) {
        res.writeHead(200, headers)
        res.end(html)
      } else if (req.url === "/favicon.svg" || req.url === "/favicon.ico") {
        res.writeHead(200, { "content-type": "image/svg+xml" })
        res.end(FAVICON)
      } else {
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("not found")
      }
    })
    // Upgrades are checked here, before `ws` sees them: a refused one gets an HTTP error and the
    // socket is closed, so not one frame of state reaches it.
    const wss = new WebSocketServer({ noServer: true })
    server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
      // Once a request asks to upgrade, Node hands its socket over with no error listener: a
      // client that resets the connection (as a refused one may) would otherwise throw an
      // uncaught ECONNRESET and take the process down. `ws` adds its own once it accepts.
      socket.on("error", () => socket.destroy())
      const url = new URL(req.url ?? "/", "http://localhost")
      if (!PageAccess.hostAllowed(hosts, req.headers.host)) {
        return refuse(socket, 421, "Misdirected Request", "unknown Host\n")
      }
      if (url.pathname !== "/ws") return refuse(socket, 404, "Not Found", "not found\n")
      if (!PageAccess.originAllowed(origins, req.headers.origin, false)) {
        return refuse(socket, 403, "Forbidden", "the Origin is not this live view\n")
      }
      if (token !== undefined) {
        const given = url.searchParams.get("token") ?? undefined
        if (given === undefined || given === "") {
          return refuse(socket, 401, "Unauthorized", "this needs the live view's token\n")
        }
        if (!PageAccess.sameToken(given, token)) {
          return refuse(socket, 403, "Forbidden", "wrong token\n")
        }
      }
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req))
    })
    const broadcast = (message: unknown) => {
      if (wss.clients.size === 0) return
      const data = JSON.stringify(message)
      for (const client of wss.clients) if (client.readyState === WebSocket.OPEN) client.send(data)
    }
    wss.on("connection", (ws) => {
      ws.send(
        JSON.stringify({
          t: "init",
          now: Date.now(),
          startedAt,
          machine,
          tasks: [...tasks.values()],
          running: [...running.values()],
          occurrences,
          lateness,
          runs,
          feed,
          breakers: [...breakers.values()],
          flow,
        }),
      )
    })

    const port = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => listen(server, options.port, host, options.fallback ?? false),
        catch: (error) => new Error(`the live view could not listen: ${String(error)}`),
      }),
      () =>
        Effect.promise(
          () =>
            new Promise<void>((resolve) => {
              for (const client of wss.clients) client.terminate()
              wss.close()
              server.close(() => resolve())
              server.closeAllConnections()
            }),
        ),
    )

    hosts = PageAccess.allowedHosts(host, port)
    origins = PageAccess.allowedOrigins(hosts)

    const addFeed = (line: FeedLine) => {
      feed.push(line)
      if (feed.length > KEEP_FEED) feed.shift()
      broadcast({ t: "feed", line })
    }

    // The inspection stream: the timing actor is the root (its session id is the rootId); every
    // other actor is a task, whose ref's id is the task's id.
    const inspect = (event: InspectionEvent) => {
      const ref = event.actorRef as unknown as { id: string; sessionId: string }
      if (ref.sessionId === event.rootId) return
      const now = Date.now()
      switch (event.type) {
        case "@xstate.actor": {
          const snapshot = event.actorRef.getSnapshot() as Inspect.TaskSnapshot
          const view: TaskView = {
            id: ref.id,
            session: ref.sessionId,
            description: descriptions[ref.id] ?? "",
            words: words.get(ref.id) ?? "",
            value: String(snapshot.value),
            status: snapshot.status,
            context: snapshot.context,
            event: undefined,
            from: undefined,
            since: now,
            pausedReason: undefined,
            flow: Flow.none,
          }
          tasks.set(ref.id, view)
          broadcast({ t: "task", task: view })
          break
        }
        case "@xstate.event": {
          const view = tasks.get(ref.id)
          // An event for a final task: XState inspects it, the machine ignores it.
          if (view !== undefined && view.session === ref.sessionId && view.status !== "active") {
            addFeed({
              at: now,
              id: ref.id,
              event: event.event.type,
              from: view.value,
              to: undefined,
            })
          }
          break
        }
        case "@xstate.snapshot": {
          const view = tasks.get(ref.id)
          if (view === undefined || view.session !== ref.sessionId) return
          const snapshot = event.snapshot as Inspect.TaskSnapshot
          const from = view.value
          view.value = String(snapshot.value)
          view.status = snapshot.status
          view.context = snapshot.context
          view.event = event.event.type
          view.from = event.event.type === "xstate.init" ? undefined : from
          view.since = now
          // The reason comes with the `paused` occurrence (or the next `watch` read).
          if (view.value !== "paused") view.pausedReason = undefined
          broadcast({ t: "task", task: view })
          if (view.from !== undefined) {
            addFeed({ at: now, id: ref.id, event: event.event.type, from, to: view.value })
          }
          break
        }
      }
    }

    const listener: Scheduler.Listener = {
      started: (run) => {
        const view: RunView = {
          id: run.id,
          scheduledFor: run.scheduledFor,
          startedAt: run.startedAt,
          attempt: run.attempt,
          runNumber: run.runNumber,
        }
        running.set(`${run.id}#${run.runNumber}`, view)
        broadcast({ t: "run", run: view })
      },
    }

    const occurrence = (o: Ledger.StreamItem) => {
      const view = toView(o)
      if (view.kind === "ran" || view.kind === "retried") {
        running.delete(`${view.id}#${view.runNumber}`)
        runs++
        lateness.push(view.startedAt - view.scheduledFor)
        if (lateness.length > KEEP_LATENESS) lateness.shift()
      }
      occurrences.push(view)
      if (occurrences.length > KEEP_OCCURRENCES) occurrences.shift()
      broadcast({ t: "occ", occ: view })
      if (view.kind === "paused") setPausedReason(view.id, view.reason)
      if (view.kind === "breaker") {
        const before = breakers.get(view.id)
        if (before !== undefined) {
          before.state = view.to
          before.since = view.at
          before.probe = view.probe
          if (view.to === "open") {
            before.openedAt = view.at
            before.halfOpenAt = view.halfOpenAt
            if (view.coolDown !== undefined) before.coolDown = view.coolDown
          } else if (view.to === "closed") {
            before.failures = 0
            before.opens = 0
            before.held = []
          }
          broadcast({ t: "breaker", breaker: before })
        }
      }
    }

    const scheduled = (id: string, schedule: Schedule.Schedule) => {
      const said =
        schedule._tag === "Cron" && typeof schedule.expression === "string"
          ? Schedule.explain(schedule.expression, schedule.timeZone, {
              dayMatch: schedule.dayMatch,
            })
          : undefined
      const text = said !== undefined && "text" in said ? said.text : ""
      words.set(id, text)
      // Scheduled again under the same id with a new schedule: the row shown says so at once.
      const view = tasks.get(id)
      if (view !== undefined && view.words !== text) {
        view.words = text
        broadcast({ t: "task", task: view })
      }
    }

    const setPausedReason = (id: string, reason: Task.PauseReason) => {
      const view = tasks.get(id)
      if (view === undefined || view.pausedReason === reason) return
      view.pausedReason = reason
      broadcast({ t: "task", task: view })
    }

    const watch = (scheduler: Scheduler.SchedulerShape): Effect.Effect<never> =>
      Effect.gen(function* () {
        for (const info of yield* scheduler.tasks({ state: "paused" })) {
          if (info.pausedReason !== undefined && tasks.get(info.id)?.value === "paused") {
            setPausedReason(info.id, info.pausedReason)
          }
        }
        for (const info of yield* scheduler.breakers) {
          const before = breakers.get(info.name)
          const view = breakerView(info, before)
          if (before === undefined || JSON.stringify(before) !== JSON.stringify(view)) {
            breakers.set(info.name, view)
            broadcast({ t: "breaker", breaker: view })
          }
        }
        for (const info of yield* scheduler.tasks()) {
          const view = tasks.get(info.id)
          const now = Flow.of(info)
          // A task the inspection stream has not shown yet gets its facts at the next read.
          if (view === undefined) continue
          if (!Flow.same(view.flow, now)) {
            view.flow = now
            broadcast({ t: "task", task: view })
          }
        }
        const counts = Flow.countsOf(yield* scheduler.stats)
        if (JSON.stringify(counts) !== JSON.stringify(flow)) {
          flow = counts
          broadcast({ t: "flow", flow })
        }
      }).pipe(Effect.andThen(Effect.sleep(WATCH_EVERY_MS)), Effect.forever)

    const shown = PageAccess.isWildcard(host) ? "127.0.0.1" : PageAccess.bracket(host)
    return {
      url: `http://${shown}:${port}/`,
      token,
      inspect,
      listener,
      scheduled,
      occurrence,
      watch,
      clients: () => wss.clients.size,
    }
  })
