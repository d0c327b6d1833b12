"""The dashboard's shared parts (not pages): dataset state, generated settings forms, the run button
and the views every method page shows. Pages live in `app_pages/` and hold widgets and layout only."""
