-- Reserved for issue 18 (0033_wallet_funding_and_unmatched); filled in by its change.
SELECT 1;
