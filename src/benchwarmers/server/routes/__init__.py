"""The HTTP routes, one module per resource; server/app.py includes their routers."""
