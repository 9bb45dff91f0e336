/** A part's wall-clock budget: trials that would not fit are skipped, and say so. */
export class Budget {
  private readonly started = performance.now()
  readonly ms: number

  constructor(ms: number) {
    this.ms = ms
  }

  elapsed(): number {
    return performance.now() - this.started
  }

  remaining(): number {
    return this.ms - this.elapsed()
  }

  /** Whether work estimated to take `ms` still fits. */
  fits(ms: number): boolean {
    return ms <= this.remaining()
  }
}

/** Progress lines go to stderr so stdout holds only the tables. */
export const progress = (line: string): void => {
  process.stderr.write(`  · ${line}\n`)
}
