-- Reserved for issue 18 (0034_statements); filled in by its change.
SELECT 1;
