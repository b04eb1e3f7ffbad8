-- Reserved for issue 18 (0032_refunds); filled in by its change.
SELECT 1;
