"""Services the API and UI call: payments, email, PDF rendering (render and send kept apart)."""
