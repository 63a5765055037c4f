import Accessories
import Testing
