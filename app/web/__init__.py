"""The webhook service: `app.web.app.create_app`, the gunicorn runner and its
companions, and the intake (`app.web.intake`). Nothing is imported here, so
the intake process loads neither Flask nor gunicorn."""
