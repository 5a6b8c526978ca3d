"""What the controller and the lane side agree on: the lane file, the failure kinds."""
