// The pure-SQL yardstick every benchmark measures beside Rail: a minimal PL/pgSQL function that
// posts one balanced transfer with a balance check (accounts locked in id order), called once per
// transfer. Its tables live beside Rail's in the benchmark's throw-away database.
import type { Pool } from '../src/platform/db.ts'

/** Creates the yardstick's function and `accounts` accounts (ids 0 … accounts − 1) holding `openingKobo` each. */
export async function createBaseline(pool: Pool, accounts: number, openingKobo: number): Promise<void> {
  await pool.query(`
    CREATE TABLE bench_accounts (id bigint PRIMARY KEY, balance bigint NOT NULL CHECK (balance >= 0));
    CREATE TABLE bench_transfers (id uuid PRIMARY KEY, debit bigint NOT NULL REFERENCES bench_accounts, credit bigint NOT NULL REFERENCES bench_accounts,
                                  amount bigint NOT NULL CHECK (amount > 0), created_at timestamptz NOT NULL DEFAULT now());
    CREATE FUNCTION bench_baseline_transfer(p_debit bigint, p_credit bigint, p_amount bigint) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM bench_accounts WHERE id IN (p_debit, p_credit) ORDER BY id FOR NO KEY UPDATE;
      UPDATE bench_accounts SET balance = balance - p_amount WHERE id = p_debit AND balance >= p_amount;
      IF NOT FOUND THEN RETURN false; END IF;
      UPDATE bench_accounts SET balance = balance + p_amount WHERE id = p_credit;
      INSERT INTO bench_transfers (id, debit, credit, amount) VALUES (gen_random_uuid(), p_debit, p_credit, p_amount);
      RETURN true;
    END $$;`)
  await pool.query(`INSERT INTO bench_accounts (id, balance) SELECT g, $1 FROM generate_series(0, $2) g`, [
    openingKobo,
    accounts - 1,
  ])
}

/** One yardstick transfer. */
export async function baselineTransfer(
  pool: Pool,
  debit: number | string,
  credit: number | string,
  amountKobo: number,
): Promise<void> {
  await pool.query('SELECT bench_baseline_transfer($1, $2, $3)', [debit, credit, amountKobo])
}
