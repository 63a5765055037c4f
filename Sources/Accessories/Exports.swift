@_exported import HomeModel
