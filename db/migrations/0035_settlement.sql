-- Reserved for issue 18 (0035_settlement); filled in by its change.
SELECT 1;
