/**
 * A real Prometheus for tests: Debian's `prometheus` binary (installed by `.ci/setup`) run as a
 * child process with its own config and data directory on a free loopback port, scraping the
 * given targets every second, and a client for its HTTP query API. Everything is on the real
 * clock; waits poll with generous deadlines, never a fixed sleep.
 *
 * @since 0.1.0
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * Polls `check` every 250 ms until it returns a value other than `undefined`, or rejects after
 * `deadlineMs` (milliseconds of real time) naming `what`, with the last thrown problem as cause.
 *
 * @since 0.1.0
 */
export const poll = async <A>(
  what: string,
  deadlineMs: number,
  check: () => Promise<A | undefined>,
): Promise<A> => {
  const deadline = Date.now() + deadlineMs
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (e) {
      last = e
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`, { cause: last })
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** A TCP port free on the loopback interface right now. @since 0.1.0 */
export const freePort = (): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** One series of an instant query's answer: its labels and its `[time, value]`. @since 0.1.0 */
export interface Series {
  readonly metric: Record<string, string>
  readonly value: readonly [number, string]
}

/** A running Prometheus. @since 0.1.0 */
export interface Server {
  /** The query API's base, `http://127.0.0.1:<port>/api/v1`. */
  readonly api: string
  /** Answers an instant PromQL query; rejects when Prometheus reports an error. */
  readonly query: (promql: string) => Promise<ReadonlyArray<Series>>
  /** Stops the process (SIGTERM, SIGKILL after 15 s) and removes its directory. */
  readonly stop: () => Promise<void>
}

/**
 * Starts Prometheus scraping `targets` (`host:port`, served at `/metrics`) every second under
 * the job `job`, and resolves once it reports ready (up to `readyMs`, default 120 s). Rejects
 * with the install hint when there is no `prometheus` binary.
 *
 * @since 0.1.0
 */
export const start = async (options: {
  readonly targets: ReadonlyArray<string>
  readonly job?: string
  readonly readyMs?: number
}): Promise<Server> => {
  let binary: string
  try {
    binary = execFileSync("sh", ["-c", "command -v prometheus"], { encoding: "utf8" }).trim()
  } catch {
    throw new Error("no prometheus binary: run `bash .ci/setup` (installs Debian's prometheus)")
  }
  const dir = mkdtempSync(join(tmpdir(), "tickwork-prometheus-"))
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      `  - job_name: ${options.job ?? "tickwork"}`,
      "    static_configs:",
      `      - targets: [${options.targets.map((t) => JSON.stringify(t)).join(", ")}]`,
      "",
    ].join("\n"),
  )
  const port = await freePort()
  const api = `http://127.0.0.1:${port}/api/v1`
  let log = ""
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  )
  child.stdout?.on("data", (d: Buffer) => {
    log += d.toString()
  })
  child.stderr?.on("data", (d: Buffer) => {
    log += d.toString()
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000)
      await exited
      clearTimeout(killer)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await poll("Prometheus to be ready", options.readyMs ?? 120_000, async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited:\n${log}`)
      const res = await fetch(`http://127.0.0.1:${port}/-/ready`)
      return res.ok ? true : undefined
    })
  } catch (e) {
    await stop()
    throw e
  }
  const query = async (promql: string): Promise<ReadonlyArray<Series>> => {
    const res = await fetch(`${api}/query?query=${encodeURIComponent(promql)}`)
    const body = (await res.json()) as { status: string; data: { result: Array<Series> } }
    if (body.status !== "success") throw new Error(`query failed: ${JSON.stringify(body)}`)
    return body.data.result
  }
  return { api, query, stop }
}
