-- What an invoice bills, line by line (optional): each line's description, quantity and unit
-- amount, whose totals add up to the invoice's amount (checked when the invoice is created). Shown
-- on the invoice's payment page and in its JSON; an invoice without lines has an empty array.
ALTER TABLE invoices
  ADD COLUMN line_items jsonb NOT NULL DEFAULT '[]'::jsonb,
  ADD CONSTRAINT invoices_line_items_array CHECK (jsonb_typeof(line_items) = 'array');
