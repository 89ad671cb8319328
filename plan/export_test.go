package plan

// SetTestPlacements sets the placement kinds plan's own tests load with: the external
// placements_test.go gives them, since this package cannot import the schedulers that
// own the blocks.
func SetTestPlacements(kinds []PlacementKind) { testPlacements = kinds }
