"""Remote execution services (REAPI): the client tfwizard uses to ask a service before a build, the recipe's TLS files, the checks."""
