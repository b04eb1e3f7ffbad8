-- Reserved for the collections work (virtual accounts, payment intents), which is built on another
-- branch. postgres-migrations needs consecutive ids, so this no-op holds the number until then:
-- when collections merges, its 0017_*.sql replaces this file (delete this one).
SELECT 1;
