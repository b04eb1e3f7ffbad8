-- What a real provider knows an account by, kept by the providers module that allocated it: Paystack
-- deactivates a dedicated account and lists its credits by its customer and account ids, Monnify a
-- reserved account by the reference it was reserved with, while Rail asks about an account by its
-- number. Written when the provider answers an allocation, before Rail records the account.
CREATE TABLE provider_accounts (
  provider text NOT NULL REFERENCES providers (name),
  account_number text NOT NULL CHECK (account_number ~ '^[0-9]{10}$'),
  provider_reference text NOT NULL CHECK (length(provider_reference) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, account_number)
);
