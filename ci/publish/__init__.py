"""After a run: the summary, the news (webhook, issues), the dashboard and the site."""
