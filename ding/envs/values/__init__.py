"""The values an env declares and produces: spaces and shapes, time steps, seeds, conversions."""
