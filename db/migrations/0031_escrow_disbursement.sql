-- Reserved for issue 18 (0031_escrow_disbursement); filled in by its change.
SELECT 1;
