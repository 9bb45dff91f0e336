/**
 * The real executable in a child process: `src/bin.ts` run by Node through tsx with the
 * `@tickwork/source` condition (the built bin is compiled from the same file). It checks what
 * the process prints and its exit code. Starting Node and tsx takes about a second on a fast
 * machine and much longer on a loaded one, hence the generous timeouts; nothing here waits on
 * a timer.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const packageDir = fileURLToPath(new URL("../", import.meta.url))
const TIMEOUT = 120_000

interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (...args: ReadonlyArray<string>): Promise<Result> => runWith({}, ...args)

const runWith = (extra: Record<string, string>, ...args: ReadonlyArray<string>): Promise<Result> =>
  new Promise((resolve, reject) => {
    const { FORCE_COLOR: _, TICKWORK_STORE: __, ...inherited } = process.env
    const env = { ...inherited, ...extra }
    execFile(
      process.execPath,
      ["--import", "tsx", "--conditions=@tickwork/source", "src/bin.ts", ...args],
      { cwd: packageDir, env: { ...env, NO_COLOR: "1" }, timeout: TIMEOUT },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== "number") return reject(error)
        resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr })
      },
    )
  })

describe("the tickwork bin", () => {
  it(
    "prints the spring-forward slot and exits 0",
    async () => {
      const result = await run(
        ...["explain", "30 2 * * *", "--tz", "Europe/Berlin", "--count", "2"],
        ...["--from", "2026-03-28T12:00:00Z"],
      )
      expect(result).toEqual({
        code: 0,
        stdout:
          "# at 02:30\n" +
          "2026-03-29T01:30:00Z  Sun 2026-03-29 03:30:00 +02:00  shifted +1h by the spring-forward gap\n" +
          "2026-03-30T00:30:00Z  Mon 2026-03-30 02:30:00 +02:00\n",
        stderr: "",
      })
    },
    TIMEOUT,
  )

  it(
    "prints the typed error's message on stderr and exits 1 on bad input",
    async () => {
      const result = await run("explain", "0 * * * *", "--count", "0")
      expect(result).toEqual({
        code: 1,
        stdout: "",
        stderr: '\nERROR\n  count must be a whole number from 1 to 10000, got "0"\n',
      })
    },
    TIMEOUT,
  )

  it(
    "a store command on a store that does not exist exits 1 naming it; TICKWORK_STORE is the default --store",
    async () => {
      const missing = "/nonexistent/tickwork/tasks.db"
      const flag = await run("tasks", "--store", missing)
      const fromEnv = await runWith({ TICKWORK_STORE: missing }, "stats")
      for (const result of [flag, fromEnv]) {
        expect(result).toEqual({
          code: 1,
          stdout: "",
          stderr: `\nERROR\n  store must be an existing SQLite file or a postgres:// URL, got "${missing}"\n`,
        })
      }
    },
    TIMEOUT,
  )
})
