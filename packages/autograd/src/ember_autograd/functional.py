"""ember.autograd.functional: vjp, jvp, jacobian, hessian (to be written)."""
