-- The sandbox bank finds its settlement pool on every transfer: one row per bank code, indexed.
CREATE UNIQUE INDEX accounts_one_settlement_per_bank ON sandbox_bank.accounts (bank_code) WHERE kind = 'settlement';
