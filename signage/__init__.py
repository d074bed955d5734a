"""The signage display: a table's results and Baccarat scoreboard in a kiosk browser, live from ZeroMQ."""
