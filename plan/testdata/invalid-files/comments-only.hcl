# ERROR: Plan declares no cells ~ no matrix block
// a plan of comments only declares nothing to run
/* not even a backend */
