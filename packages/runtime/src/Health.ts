/**
 * Health: whether a scheduler can make progress, as `ok`, `degraded` or `unhealthy` with the
 * reasons. A scheduler (in-memory `Scheduler.health`, durable `DurableScheduler.health`) gathers
 * a few {@link Signals} and {@link assess} decides, purely, against {@link Bounds}:
 *
 * | reason          | degraded                                  | unhealthy                                        |
 * | --------------- | ----------------------------------------- | ------------------------------------------------ |
 * | `stalled`       | —                                         | work is due and no run has started for `stallMs` |
 * | `behind`        | work waited `stallMs`, but runs do start   | —                                                |
 * | `store-failing` | the store fails now                       | the store has failed for `storeMs`               |
 * | `uncommitted`   | —                                         | runs finished but their completion did not commit |
 * | `store-corrupt` | —                                         | the store is damaged (`StoreCorrupt`)             |
 *
 * Each assessment also sets the `tickwork_health` gauge (0 ok, 1 degraded, 2 unhealthy) under
 * the scheduler's label. {@link layerHttp} mounts it as an HTTP route for a liveness or
 * readiness probe on an effect `HttpRouter`; {@link layer} serves it on a port of its own.
 *
 * **Example** (Liveness and readiness probes on port 8080)
 *
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Health, Scheduler } from "@tickwork/runtime"
 *
 * const check = Effect.gen(function* () {
 *   return yield* (yield* Scheduler.Scheduler).health
 * })
 * const probes = Health.layer({ port: 8080, check })
 * ```
 *
 * @since 0.4.0
 */
import { createServer } from "node:http"
import { Context, Effect, Layer, Metric } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import type { ServeError } from "effect/http/HttpServerError"

/**
 * `ok`: making progress. `degraded`: working, but behind or on a failing store. `unhealthy`: it
 * cannot make progress (a liveness probe should restart it).
 *
 * @category models
 * @since 0.4.0
 */
export type Status = "ok" | "degraded" | "unhealthy"

/**
 * One reason a scheduler is not `ok`.
 *
 * @category models
 * @since 0.4.0
 */
export interface Reason {
  readonly code: "stalled" | "behind" | "store-failing" | "uncommitted" | "store-corrupt"
  readonly status: "degraded" | "unhealthy"
  /** A sentence with the figures, e.g. `work due for 75000 ms and no run started for 75000 ms`. */
  readonly message: string
}

/**
 * A scheduler's health: the worst of its reasons' statuses, `ok` when it has none.
 *
 * @category models
 * @since 0.4.0
 */
export interface Health {
  readonly status: Status
  readonly reasons: ReadonlyArray<Reason>
}

/**
 * What a scheduler knows about its progress. Times are epoch ms on the scheduler's clock.
 *
 * @category models
 * @since 0.4.0
 */
export interface Signals {
  readonly now: number
  /** The due time of the earliest work that could start now but has not; `undefined`: none. */
  readonly dueSince: number | undefined
  /** When the last run started; `undefined`: none yet (the scheduler's start counts as one). */
  readonly lastStartedAt: number | undefined
  /** When the store started failing (an outage in progress); `undefined`: it works. */
  readonly storeFailingSince?: number | undefined
  /** Runs that finished more than a lease ago and are still not committed. */
  readonly uncommitted?: number | undefined
  /** The store's damage, as its error message; `undefined`: none found. */
  readonly corrupt?: string | undefined
}

/**
 * How long each condition may last before it counts, ms.
 *
 * @category models
 * @since 0.4.0
 */
export interface Bounds {
  /** Work due with no run started for this long is `stalled`. Default 60 s. */
  readonly stallMs: number
  /** A store failing for this long is unhealthy. Default 60 s. */
  readonly storeMs: number
}

/**
 * The default bounds: a minute each, well past a store restart (PostgreSQL's took ~0.2 s to
 * recover from in the chaos runs) or a busy minute's backlog.
 *
 * @category models
 * @since 0.4.0
 */
export const defaultBounds: Bounds = { stallMs: 60_000, storeMs: 60_000 }

/**
 * Decides a scheduler's health from its signals. Pure.
 *
 * @category constructors
 * @since 0.4.0
 */
export const assess = (signals: Signals, bounds: Bounds = defaultBounds): Health => {
  const reasons: Array<Reason> = []
  const { now, dueSince, lastStartedAt } = signals
  if (signals.corrupt !== undefined) {
    reasons.push({ code: "store-corrupt", status: "unhealthy", message: signals.corrupt })
  }
  if (dueSince !== undefined && dueSince <= now) {
    const waited = now - dueSince
    const idle = now - Math.max(dueSince, lastStartedAt ?? Number.NEGATIVE_INFINITY)
    if (idle >= bounds.stallMs) {
      reasons.push({
        code: "stalled",
        status: "unhealthy",
        message: `work due for ${waited} ms and no run started for ${idle} ms (bound ${bounds.stallMs} ms)`,
      })
    } else if (waited >= bounds.stallMs) {
      reasons.push({
        code: "behind",
        status: "degraded",
        message: `work due for ${waited} ms waits for a worker (bound ${bounds.stallMs} ms); runs still start`,
      })
    }
  }
  const since = signals.storeFailingSince
  if (since !== undefined) {
    const failing = Math.max(0, now - since)
    reasons.push({
      code: "store-failing",
      status: failing >= bounds.storeMs ? "unhealthy" : "degraded",
      message: `the store has failed for ${failing} ms (bound ${bounds.storeMs} ms)`,
    })
  }
  const uncommitted = signals.uncommitted ?? 0
  if (uncommitted > 0) {
    reasons.push({
      code: "uncommitted",
      status: "unhealthy",
      message: `${uncommitted} run(s) finished more than a lease ago and are not committed`,
    })
  }
  const status: Status = reasons.some((r) => r.status === "unhealthy")
    ? "unhealthy"
    : reasons.length > 0
      ? "degraded"
      : "ok"
  return { status, reasons }
}

/**
 * How often a scheduler re-assesses itself in the background while its health may be changing,
 * ms: the `tickwork_health` gauge lags a stall by at most this much with nobody calling `health`.
 *
 * @category models
 * @since 0.4.0
 */
export const refreshMs = 5_000

/**
 * When the in-memory scheduler's background assessment should next look (epoch ms), given the
 * last one: `refresh` ms on while it is not `ok` (it may recover or worsen at any time); else the
 * first moment work could have waited `stallMs` (`dueSince + stallMs`, or `nextSlot + stallMs`
 * when nothing is due yet), but never sooner than `refresh` ms on; `undefined` when nothing is
 * scheduled (only new work can change it). Pure. The watcher is woken early when new work moves
 * the earliest slot before `at - stallMs`.
 *
 * @category getters
 * @since 0.4.0
 */
export const recheckAt = (
  health: Health,
  signals: Signals,
  nextSlot: number | undefined,
  bounds: Bounds = defaultBounds,
  refresh: number = refreshMs,
): number | undefined => {
  const soonest = signals.now + refresh
  if (health.status !== "ok") return soonest
  const from = signals.dueSince ?? nextSlot
  return from === undefined ? undefined : Math.max(soonest, from + bounds.stallMs)
}

/** The gauge: 0 ok, 1 degraded, 2 unhealthy, per scheduler. */
const gauge = Metric.gauge("tickwork_health", {
  description: "the scheduler's health at its last assessment: 0 ok, 1 degraded, 2 unhealthy",
})

const levels: Record<Status, number> = { ok: 0, degraded: 1, unhealthy: 2 }

/**
 * Sets the `tickwork_health` gauge of scheduler `name` to `health`'s status.
 *
 * @category combinators
 * @since 0.4.0
 */
export const record = (name: string, health: Health): Effect.Effect<void> =>
  Metric.update(Metric.withAttributes(gauge, { scheduler: name }), levels[health.status])

/**
 * A probe route's options: where, what it checks, and which status fails it.
 *
 * @category models
 * @since 0.4.0
 */
export interface RouteOptions<R = never> {
  /** The route's path. Default `/healthz`. */
  readonly path?: `/${string}` | undefined
  /** The health to serve: e.g. `scheduler.health`. */
  readonly check: Effect.Effect<Health, never, R>
  /**
   * The lowest status answered with 503. `"unhealthy"` (default) suits a liveness probe (restart
   * a process that cannot make progress); `"degraded"` a readiness probe.
   */
  readonly failOn?: "unhealthy" | "degraded" | undefined
}

/**
 * Answers a probe: the health as JSON, 200 while below `failOn`, 503 from it.
 *
 * @category constructors
 * @since 0.4.0
 */
export const respond = (
  health: Health,
  failOn: "unhealthy" | "degraded" = "unhealthy",
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(health, {
    status: levels[health.status] >= levels[failOn] ? 503 : 200,
    headers: { "cache-control": "no-store" },
  })

/**
 * A `GET` route for an effect `HttpRouter` answering with {@link respond}: mount one for
 * liveness (`failOn: "unhealthy"`) and one for readiness (`failOn: "degraded"`).
 *
 * @category layers
 * @since 0.4.0
 */
export const layerHttp = <R>(options: RouteOptions<R>) =>
  HttpRouter.add(
    "GET",
    options.path ?? "/healthz",
    Effect.map(options.check, (health) => respond(health, options.failOn)),
  )

/**
 * Serves {@link layerHttp} routes on a port of their own (`@effect/platform-node`, an optional
 * peer dependency, loaded when the layer is built): `/livez` (503 when unhealthy) and `/readyz`
 * (503 when degraded or worse). Fails with `ServeError` when the port cannot be bound.
 *
 * @category layers
 * @since 0.4.0
 */
export const layer = <R>(options: {
  readonly port: number
  readonly host?: string | undefined
  readonly check: Effect.Effect<Health, never, R>
}): Layer.Layer<Endpoint, ServeError, R> => {
  const listen = {
    port: options.port,
    ...(options.host === undefined ? {} : { host: options.host }),
  }
  return Layer.unwrap(
    Effect.map(loadNodeHttpServer, (NodeHttpServer) => {
      const routes = HttpRouter.serve(
        Layer.mergeAll(
          layerHttp({ path: "/livez", check: options.check, failOn: "unhealthy" }),
          layerHttp({ path: "/readyz", check: options.check, failOn: "degraded" }),
        ),
        { disableLogger: true, disableListenLog: true },
      )
      const endpoint = Layer.effect(
        Endpoint,
        Effect.gen(function* () {
          const { address } = yield* HttpServer.HttpServer
          return {
            url: HttpServer.formatAddress(address),
            port: address._tag === "UnixPathAddress" ? 0 : address.port,
          }
        }),
      )
      return Layer.merge(routes, endpoint).pipe(
        Layer.provide(NodeHttpServer.layer(() => createServer(), listen)),
      )
    }),
  ) as Layer.Layer<Endpoint, ServeError, R>
}

/**
 * The probe server's address and port (the bound one when `port` was 0).
 *
 * @category services
 * @since 0.4.0
 */
export class Endpoint extends Context.Service<
  Endpoint,
  { readonly url: string; readonly port: number }
>()("@tickwork/runtime/Health/Endpoint") {}

/** `@effect/platform-node`'s HTTP server, loaded only when {@link layer} is built. */
const loadNodeHttpServer = Effect.tryPromise({
  try: () => import("@effect/platform-node/NodeHttpServer"),
  catch: (cause) =>
    new Error(
      'Health.layer needs the "@effect/platform-node" package (4.x): install it beside @tickwork/runtime',
      { cause },
    ),
}).pipe(Effect.orDie)
