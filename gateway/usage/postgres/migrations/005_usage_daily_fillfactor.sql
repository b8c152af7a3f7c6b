-- Every batch updates today's rollup rows: leave room on each page so the updates stay in place (HOT updates,
-- no index churn) instead of bloating the table with moved row versions.
ALTER TABLE usage_daily SET (fillfactor = 70);
